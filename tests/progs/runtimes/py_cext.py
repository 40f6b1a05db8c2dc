# C extensions called from Python, and Python called back from them
# (tests/runtimes/python_frames.sh): json's C encoder calls plain() for
# objects it cannot encode; re's C matcher returns 2,000 matches.
import json
import re


class Point:
    def __init__(self, i):
        self.x, self.y = i, -i


def plain(obj):
    return {"x": obj.x, "y": obj.y, "pad": "p" * (600 + obj.x % 7)}


def encode_points():
    return json.dumps([Point(i) for i in range(2000)], default=plain)


def find_words(text):
    return re.findall(r'"pad": "p+"', text)


if __name__ == "__main__":
    text = encode_points()
    print(len(text), len(find_words(text)))
