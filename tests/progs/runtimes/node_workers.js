// Node runtime (V8: JIT, GC, libuv's thread pool): objects, strings, JSON,
// a Map and 2 worker threads, with a deterministic output; exit status 7.
// Worker k builds 20000 * (k + 1) records, serializes them to JSON and
// reports their count and the JSON's length; the main thread sorts strings.
'use strict';
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');

function build(k) {
    const n = 20000 * (k + 1);
    const records = [];
    for (let i = 0; i < n; i++) records.push({ id: i, name: `rec-${k}-${(i * 7919).toString(16)}`, tags: [k, i % 7] });
    const json = JSON.stringify(records);
    return `worker ${k}: ${JSON.parse(json).length} records, ${json.length} bytes of JSON`;
}

if (isMainThread) {
    const names = new Map();
    for (let i = 0; i < 50000; i++) names.set(`key-${(i * 104729) % 50000}`, i);
    const sorted = [...names.keys()].sort();
    const results = [];
    let exited = 0;
    for (let k = 0; k < 2; k++) {
        const w = new Worker(__filename, { workerData: k });
        w.on('message', (m) => { results[k] = m; });
        w.on('exit', () => {
            if (++exited < 2) return;
            console.log(results.join('\n'));
            console.log(`main: ${sorted.length} keys, first ${sorted[0]}, last ${sorted[sorted.length - 1]}`);
            process.exitCode = 7;
        });
    }
} else {
    parentPort.postMessage(build(workerData));
}
