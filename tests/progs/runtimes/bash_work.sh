# Bash runtime (Debian's bash, the system malloc): a loop of builtins over an
# indexed and an associative array, then a pipeline of 3 subshells, the last
# of which execs bash again; deterministic output, exit status 8.
#   a[i]=...:     3000 array elements (32 bytes each) and their values,
#                 "item-N" + NUL: 28890 bytes;
#   seen[key]=1:  3000 hash buckets (32 bytes each), 3000 values "1" + NUL,
#                 and the table grown once (32768 bytes).
# Processes: this shell, 2 forked subshells, the third subshell's image
# before its exec and the bash it execs: 5.
declare -A seen
sum=0
for ((i = 0; i < 3000; i++)); do
    a[i]="item-$((i * 7919 % 3000))"
    seen[${a[i]}]=1
    sum=$((sum + ${#a[i]}))
done
echo "sum $sum, distinct ${#seen[@]}"
printf '%s\n' "${a[@]}" |
    while read -r item; do [[ $item == *7 ]] && echo "$item"; done |
    /usr/bin/bash -c 'n=0; while read -r item; do n=$((n + 1)); done; echo "ending in 7: $n"'
exit 8
