# Python frames in every view (tests/runtimes/python_names.sh): json's
# decoder (Python calling the C scanner) keeps 2,000 decoded documents
# until the interpreter ends (it frees them then: no leak).
import json


def decode_all(n):
    return [json.loads('{"k": [%d, "%s"]}' % (i, "v" * 100)) for i in range(n)]


if __name__ == "__main__":
    kept = decode_all(2000)
    print(len(kept))
