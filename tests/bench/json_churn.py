# json_churn: the Python workload of the benchmark. Builds a list of nested
# records, then round-trips it through json.dumps/json.loads several times
# (run with PYTHONMALLOC=malloc so every object is a malloc call).
# Usage: python3 json_churn.py [RECORDS] [LOOPS]; prints a checksum.
import json
import sys

records = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
loops = int(sys.argv[2]) if len(sys.argv) > 2 else 4

data = [
    {
        "id": i,
        "name": "user-%06d" % i,
        "email": "user%d@example.org" % i,
        "score": i * 0.37,
        "tags": ["t%d" % (i % 17), "g%d" % (i % 5), "active" if i % 3 else "idle"],
        "address": {"street": "%d Main Street" % (i % 997), "zip": "%05d" % (i * 13 % 100000)},
    }
    for i in range(records)
]

checksum = 0
for loop in range(loops):
    text = json.dumps(data)
    data = json.loads(text)
    data[loop]["score"] += 1.0
    checksum += len(text)
print("json_churn: %d records, %d loops, checksum %d" % (records, loops, checksum))
