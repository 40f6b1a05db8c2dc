#!/bin/bash
# The example rules files do what their comments say on typical stacks:
# tbb-framework (root at the task, ROOT classes pruned, scheduler dropped)
# and cpython (the interpreter loop collapsed, pymalloc dropped).
source "$(dirname "$0")/../lib/lib.sh"
source "$ROOT/tests/lib/fixtures.sh"

printf '%s\n' \
  $'10\tmain\ttbb::detail::r1::arena::process\ttbb::detail::d1::function_task<Reco::run()::{lambda()#1}>::execute(tbb::detail::d1::execution_data&)\tReco::fit()\tTClass::New(void*)\tTClass::Init()\tmalloc' \
  $'5\tmain\tReco::setup()\tTFormula::Compile(char const*)\tTFormula::Analyze()\tmalloc' \
  | stacks_db tbb.db
assert_eq "$("$MPQ" fold tbb.db --rules tbb-framework)" \
"main;Reco::setup();TFormula::Compile(char const*) 5
tbb::detail::d1::function_task<Reco::run()::{lambda()#1}>::execute(tbb::detail::d1::execution_data&);Reco::fit();TClass::New(void*) 10" \
  "tbb-framework: root at the task, TClass/TFormula pruned"

printf '%s\n' \
  $'7\tmain\tPy_BytesMain\tpymain_run_python\tPyRun_SimpleFileExFlags\t_PyEval_EvalFrameDefault\t_PyFunction_Vectorcall\t_PyEval_EvalFrameDefault\tPyObject_Vectorcall\tcfunction_vectorcall_FASTCALL\tnumpy_array_new\tPyObject_Malloc\tmalloc' \
  | stacks_db py.db
assert_eq "$("$MPQ" fold py.db --rules cpython)" "PyRun_SimpleFileExFlags;numpy_array_new 7" "cpython: interpreter loop collapsed"
