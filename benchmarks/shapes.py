"""Synthetic conference exports, generated to each documented shape (no site's data is copied).

`PAPERS` are invented papers; the functions render them as an OpenReview API v2 / v1
export, the conference site's program JSON (orals listed twice, optionally without
abstracts), an {id: abstract} file, and flat records.
"""

from __future__ import annotations

import json
from pathlib import Path

PAPERS = [
    {"id": "Xb7Q2rTz01", "num": 101,
     "title": r"$\beta$-DPO: Preference Optimization with a Dynamic $\beta$",
     "authors": [("Émilie Durand", "Université de Montréal"), ("Emanuele Rodolà", "Sapienza University of Rome")],
     "abstract": ("Direct preference optimization uses a fixed temperature. We propose a dynamic temperature "
                  "that adapts to the quality of each preference pair. It improves win rates on three "
                  "alignment benchmarks. Code: https://github.com/example/beta-dpo."),
     "area": "Deep Learning", "subarea": "Alignment", "keywords": ["preference optimization", "alignment"],
     "type": "oral", "track": "Main"},
    {"id": "Kq8Lm3Vn02", "num": 102,
     "title": "Sparse Masks for Protein Folding",
     "authors": [("Zoë Müller", "ETH Zürich"), ("Wei Zhang", "Tsinghua University")],
     "abstract": ("Protein structure prediction models are large. We learn sparse binary masks over the weights "
                  "of a folding model and keep its accuracy while pruning most parameters."),
     "area": "Applications", "subarea": "Biology", "keywords": ["protein folding", "pruning"],
     "type": "spotlight", "track": "Main"},
    {"id": "Pz4Rt6Ws03", "num": 103,
     "title": "A Benchmark for Multilingual Theorem Proving",
     "authors": [("Ana Lima", "Universidade de São Paulo")],
     "abstract": ("We release a benchmark of formal theorem proving problems stated in twelve languages, and "
                  "evaluate large language models on it."),
     "area": "Datasets", "subarea": "Reasoning", "keywords": ["theorem proving", "benchmark"],
     "type": "poster", "track": "Datasets and Benchmarks"},
    {"id": "Mn5Yu7Ko04", "num": 104,
     "title": "Diffusion Policies That Plan Ahead",
     "authors": [("Wei Zhang", "Tsinghua University"), ("Jonas Berg", "KTH")],
     "abstract": "",  # not yet published
     "area": "Reinforcement Learning", "subarea": "Planning", "keywords": ["diffusion", "planning"],
     "type": "poster", "track": "Main"},
]

_GROUP = {"Main": "Conference", "Datasets and Benchmarks": "Datasets_and_Benchmarks_Track"}


def note_v2(p: dict) -> dict:
    content = {
        "title": p["title"], "authors": [a for a, _ in p["authors"]],
        "authorids": [f"~{a.replace(' ', '_')}1" for a, _ in p["authors"]],
        "keywords": p["keywords"], "primary_area": p["area"].lower().replace(" ", "_"),
        "TLDR": f"TLDR of {p['id']}", "venue": f"NeurIPS 2026 {p['type']}",
        "venueid": f"NeurIPS.cc/2026/{_GROUP[p['track']]}", "pdf": f"/pdf/{p['id']}.pdf",
        "_bibtex": "@inproceedings{x, title={" + p["title"] + "}}",
    }
    if p["abstract"]:
        content["abstract"] = p["abstract"]
    return {"id": p["id"], "forum": p["id"], "content": {k: {"value": v} for k, v in content.items()}}


def note_v1(p: dict) -> dict:
    note = note_v2(p)
    note["content"] = {k: v["value"] for k, v in note["content"].items()}
    note["content"]["TL;DR"] = note["content"].pop("TLDR")
    return note


def program_entry(p: dict, eventtype: str, with_abstract: bool = True) -> dict:
    return {
        "id": p["num"], "uid": f"u{p['num']}", "name": p["title"],
        "authors": [{"id": i, "fullname": a, "url": "", "institution": inst} for i, (a, inst) in enumerate(p["authors"])],
        "abstract": p["abstract"] if with_abstract and p["abstract"] else None,
        "topic": f"{p['area']}->{p['subarea']}", "keywords": p["keywords"],
        "decision": f"Accept ({p['type']})", "eventtype": eventtype, "event_type": eventtype,
        "session": "San Diego Poster Session 3", "virtualsite_url": f"/virtual/2026/poster/{p['num']}",
        "paper_url": f"https://openreview.net/forum?id={p['id']}",
        "paper_pdf_url": f"https://openreview.net/pdf?id={p['id']}",
        "sourceurl": f"https://openreview.net/group?id=NeurIPS.cc/2026/{_GROUP[p['track']]}",
    }


def program(papers=PAPERS, with_abstracts: bool = True) -> dict:
    """The site's program: orals appear twice (their talk and their poster)."""
    results = []
    for p in papers:
        if p["type"] == "oral":
            results.append(program_entry(p, "Oral", with_abstracts))
        results.append(program_entry(p, "Poster", with_abstracts))
    return {"count": len(results), "next": None, "previous": None, "results": results}


def abstracts_map(papers=PAPERS) -> dict:
    return {str(p["num"]): p["abstract"] for p in papers if p["abstract"]}


def flat_record(p: dict) -> dict:
    return {"id": p["id"], "title": p["title"], "abstract": p["abstract"], "authors": [a for a, _ in p["authors"]],
            "keywords": p["keywords"], "area": p["area"], "type": p["type"], "track": p["track"],
            "url": f"https://openreview.net/forum?id={p['id']}"}


def write_json(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


# -- a conference week: talks and posters over two days, in the program's local time (UTC-8) ---------------

WEEK_OFFSET = "-08:00"
WEEK_DAYS = ("2026-12-08", "2026-12-09")  # a Tuesday and a Wednesday


def _at(day: int, hhmm: str) -> str:
    return f"{WEEK_DAYS[day]}T{hhmm}:00{WEEK_OFFSET}"


def _talk(session: str, day: int, start: str, end: str, room: str) -> dict:
    return {"eventtype": "Oral", "session": session, "starttime": _at(day, start), "endtime": _at(day, end),
            "room_name": room, "poster_position": None}


def _poster(session: str, day: int, start: str, end: str, number: str) -> dict:
    return {"eventtype": "Poster", "session": session, "starttime": _at(day, start), "endtime": _at(day, end),
            "room_name": "Exhibit Hall C,D,E", "poster_position": number}


_P1 = ("Poster Session 1", 0, "16:30", "19:30")
_P3 = ("Poster Session 3", 1, "11:00", "14:00")
_P4 = ("Poster Session 4", 1, "16:30", "19:30")

# Invented papers with their entries in the program. Oral Session 2A and 2B run at the same time (a clash).
WEEK = [
    ({"id": "Wk01", "num": 201, "title": "Direct Preference Optimization Without a Reference Model",
      "abstract": ("Preference optimization usually keeps a frozen reference model. We remove the reference "
                   "model and regularize the policy directly, halving memory while matching win rates."),
      "type": "oral"},
     [_talk("Oral Session 2A", 0, "10:00", "10:15", "Hall A"), _poster(*_P3, "1201")]),
    ({"id": "Wk02", "num": 202, "title": "Reward Models That Know When They Are Wrong",
      "abstract": ("Reward models used for preference optimization are overconfident. We calibrate reward models "
                   "with ensembles and abstain on uncertain preference pairs during alignment."),
      "type": "oral"},
     [_talk("Oral Session 2B", 0, "10:00", "10:15", "Hall B"), _poster(*_P3, "1202")]),
    ({"id": "Wk03", "num": 203, "title": "Pruning Preference Data for Alignment",
      "abstract": ("Not every preference pair helps alignment. We score preference pairs by their influence and "
                   "prune half of the data while improving preference optimization."),
      "type": "spotlight"},
     [{**_talk("Oral Session 2A", 0, "10:15", "10:30", "Hall A"), "eventtype": "Spotlight"}, _poster(*_P1, "301")]),
    ({"id": "Wk04", "num": 204, "title": "Sparse Attention for Long Protein Sequences",
      "abstract": ("Protein language models struggle with long sequences. We learn sparse attention patterns that "
                   "scale to proteins of ten thousand residues."),
      "type": "poster"},
     [_poster(*_P1, "302")]),
    ({"id": "Wk05", "num": 205, "title": "Graph Networks for Medium-Range Weather Forecasting",
      "abstract": ("We forecast the weather ten days ahead with a graph neural network on a spherical mesh, "
                   "trained on forty years of reanalysis data."),
      "type": "poster"},
     [_poster(*_P3, "1203")]),
    ({"id": "Wk06", "num": 206, "title": "Retrieval-Augmented Theorem Proving",
      "abstract": ("Language models prove more theorems when they retrieve relevant lemmas. We train a retriever "
                   "jointly with the prover on a library of formal mathematics."),
      "type": "oral"},
     [_talk("Oral Session 4C", 1, "15:30", "15:45", "Room 6E"), _poster(*_P4, "4010")]),
    ({"id": "Wk07", "num": 207, "title": "Diffusion Policies for Dexterous Manipulation",
      "abstract": ("Robots manipulate objects with diffusion policies that denoise action sequences. We add "
                   "tactile feedback and double the success rate on dexterous tasks."),
      "type": "poster"},
     [_poster(*_P4, "4011")]),
    ({"id": "Wk08", "num": 208, "title": "Offline Reinforcement Learning from Human Preferences",
      "abstract": ("We learn policies offline from human preference labels over trajectories, without a reward "
                   "model, and compare to preference optimization for language models."),
      "type": "poster"},
     [_poster(*_P1, "303")]),
]


def week_program() -> dict:
    """The site's program for the week: every talk and every poster is an entry of its own (orals twice)."""
    results = []
    for p, entries in WEEK:
        for entry in entries:
            results.append({
                "id": p["num"], "uid": f"u{p['num']}", "name": p["title"],
                "authors": [{"id": 1, "fullname": "Ana Lima", "url": "", "institution": "Universidade de São Paulo"}],
                "abstract": p["abstract"], "topic": "Deep Learning->Alignment", "keywords": [],
                "decision": f"Accept ({p['type']})", "virtualsite_url": f"/virtual/2026/poster/{p['num']}",
                "paper_url": f"https://openreview.net/forum?id={p['id']}",
                "sourceurl": "https://openreview.net/group?id=NeurIPS.cc/2026/Conference", **entry})
    return {"count": len(results), "next": None, "previous": None, "results": results}
