"""A Concordia bot in Python (standard library only): builds a house when it can, else plays a
random legal action, reproducibly from the seed it is given. Protocol: docs/bot-protocol.md."""

import json
import random
import sys


def main() -> None:
    hello = json.loads(sys.stdin.readline())
    rng = random.Random(hello["seed"])
    # the action names are all it reads; the observation and the state are not sent
    print(json.dumps({"type": "hello", "protocol": "concordia-bot", "version": 1, "name": "py-builder",
                      "want": ["actions"]}), flush=True)
    for line in sys.stdin:  # one request per line until stdin closes at the end of the game
        request = json.loads(line)
        builds = [a["id"] for a in request["actions"] if ": build in " in a["name"]]
        action = rng.choice(builds or request["legal"])
        print(json.dumps({"action": action}), flush=True)


if __name__ == "__main__":
    main()
