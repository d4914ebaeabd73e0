#!/usr/bin/env python3
"""How large a contentless FTS5 index is next to the text it indexes.

The history's `bytes` column (what history.max_mb sums) counts a third of a flow's search text
for the index (StoreDatabase::storedBytes). This measures the real share: documents cut from
this repository's own prose and code (a stand-in for agent traffic: instructions, source files
and tool output), indexed the way the history indexes them (fts5(body, content=''), the default
unicode61 tokenizer), with the SQLite library Debian's Qt uses.

Usage: python3 bench/record/index_share.py [--megabytes 30]
"""
import argparse
import os
import pathlib
import random
import sqlite3
import tempfile

parser = argparse.ArgumentParser()
parser.add_argument('--megabytes', type=float, default=30)
args = parser.parse_args()

root = pathlib.Path(__file__).resolve().parents[2]
corpus = ''.join(p.read_text(encoding='utf-8', errors='replace')
                 for pattern in ('core/**/*.cpp', 'core/**/*.h', 'docs/*.md', 'README.md')
                 for p in sorted(root.glob(pattern)))
random.seed(1)
print(f'sqlite {sqlite3.sqlite_version}; corpus {len(corpus) / 1e6:.1f} MB of this repository\'s text')
print('| document chars | documents | text MB | index MB | index / text |')
print('|---|---|---|---|---|')
for size in (2_000, 20_000, 100_000):
    with tempfile.TemporaryDirectory() as tmp:
        db = sqlite3.connect(os.path.join(tmp, 'index.sqlite3'))
        db.execute("CREATE VIRTUAL TABLE flows_fts USING fts5(body, content='')")
        count = text = 0
        while text < args.megabytes * 1e6:
            start = random.randrange(0, max(1, len(corpus) - size))
            doc = corpus[start:start + size]
            db.execute('INSERT INTO flows_fts(rowid, body) VALUES(?, ?)', (count, doc))
            count += 1
            text += len(doc)
        db.commit()
        pages, page_size = db.execute('PRAGMA page_count').fetchone()[0], db.execute('PRAGMA page_size').fetchone()[0]
        db.close()
        index = pages * page_size
        print(f'| {size:,} | {count:,} | {text / 1e6:.1f} | {index / 1e6:.1f} | {index / text:.3f} |')
