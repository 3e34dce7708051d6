"""A NeurIPS-size run: a generated conference program ingested, then the bot under load, then a soak.

The program is the conference site's JSON (the shape `benchmarks/shapes.py` documents):
N papers with titles, 2-6 authors drawn from a few thousand invented names, one of
24 areas, oral/spotlight/poster, two tracks. Abstracts are recombined from real
sentences (the bundled corpus and BEIR SciFact), 1,000-1,900 characters like a
NeurIPS abstract, so no two are the same and no site's data is copied.

Measured, printing numbers:
  1. ingest: `paperbot ingest program.json` end to end (process start included),
     docs/s; the baseline in the same run is the model alone encoding a sample of
     the same texts (title and abstract, as embedded), before and after, so the
     ratio says how close the pipeline comes to what the model allows here;
  2. filters (issue 12): warm filtered searches (type, author, area) against
     unfiltered ones on the same store, interleaved, p50 ratio;
  3. concurrency: N simultaneous /ask through the mock-client harness (real
     discord.py classes, real store and model): answered, p50/p95, event-loop lag;
  4. soak: questions at a steady pace for M minutes through the harness; RSS and
     open file descriptors sampled every few seconds into a CSV and an SVG picture
     (`--plot LABEL=CSV ...` draws several soaks' CSVs in one picture).
     Steps 3 and 4 run in a separate bot process so its memory is the bot's own.

    .venv/bin/python -m benchmarks.conference_bench --papers 6000 --workdir /tmp/conf --soak-minutes 20
    .venv/bin/python -m benchmarks.conference_bench --workdir /tmp/conf --skip-ingest   # reuse the store
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.bot_concurrency import lag_monitor
from benchmarks.common import REPO, SCIFACT, percentile, rss_mb
from benchmarks.scale_bench import sentence_pool
from benchmarks.shapes import program_entry

AREAS = [
    ("Deep Learning", "Architectures"), ("Deep Learning", "Theory"), ("Optimization", "Convex"),
    ("Optimization", "Non-convex"), ("Reinforcement Learning", "Deep RL"), ("Reinforcement Learning", "Planning"),
    ("Probabilistic Methods", "Bayesian Inference"), ("Probabilistic Methods", "Gaussian Processes"),
    ("Applications", "Biology"), ("Applications", "Health"), ("Applications", "Chemistry"),
    ("Theory", "Learning Theory"), ("Theory", "Statistics"), ("Generative Models", "Diffusion"),
    ("Generative Models", "Language Models"), ("Computer Vision", "Recognition"), ("Computer Vision", "3D"),
    ("Natural Language Processing", "Reasoning"), ("Fairness", "Privacy"), ("Neuroscience", "Cognitive Science"),
    ("Datasets", "Benchmarks"), ("Graph Learning", "GNNs"), ("Causality", "Causal Discovery"),
    ("Interpretability", "Mechanistic"),
]
FIRST = ["Ana", "Wei", "Émilie", "Jonas", "Zoë", "Kenji", "Priya", "Olusegun", "María", "Søren", "Li", "Fatima",
         "Mateus", "Chloé", "Arjun", "Yuki", "Ibrahim", "Elena", "Tomás", "Hyun", "Noor", "Dmitri", "Aisha", "Lukas",
         "Sofía", "Emanuele", "Mei", "Kwame", "Ingrid", "Rafael", "Jiho", "Leila", "Bram", "Anaïs", "Hugo", "Ravi"]
LAST = ["Zhang", "Durand", "Rodolà", "Müller", "Lima", "Tanaka", "Sharma", "Adeyemi", "García", "Nørgaard", "Chen",
        "Haddad", "Silva", "Lefèvre", "Patel", "Sato", "Okafor", "Ivanova", "Núñez", "Kim", "Rahman", "Volkov",
        "Bello", "Schmidt", "Ortiz", "Rossi", "Wang", "Mensah", "Lindqvist", "Costa", "Park", "Karimi", "de Vries",
        "Moreau", "Berg", "Iyer", "Liu", "Novak", "Kowalski", "Yilmaz"]
KEYWORDS = ["transformers", "diffusion", "reinforcement learning", "pruning", "sparsity", "alignment", "benchmark",
            "graph neural networks", "causal inference", "privacy", "fairness", "optimization", "generalization",
            "interpretability", "protein design", "robustness", "federated learning", "in-context learning",
            "representation learning", "uncertainty", "bandits", "kernel methods", "vision-language", "agents"]
INSTITUTIONS = ["Tsinghua University", "ETH Zürich", "MIT", "Université de Montréal", "KTH", "Sapienza", "KAIST",
                "University of Tokyo", "EPFL", "Universidade de São Paulo", "Stanford", "Max Planck Institute"]


def generate_program(n: int, pool: list[str], seed: int) -> dict:
    rng = random.Random(seed)
    names = [f"{f} {ln}" for f in FIRST for ln in LAST]  # 1,440 people; popular ones write more papers
    weights = [1 / (1 + i) ** 0.6 for i in range(len(names))]
    rng.shuffle(names)
    results = []
    for num in range(1, n + 1):
        target, sentences = rng.randint(1000, 1900), []
        while sum(len(s) + 1 for s in sentences) < target:
            sentences.append(rng.choice(pool))
        words = rng.choice(pool).rstrip(".").split()[:rng.randint(5, 10)]
        area, sub = rng.choice(AREAS)
        kind = rng.choices(["oral", "spotlight", "poster"], [0.02, 0.08, 0.90])[0]
        people = list(dict.fromkeys(rng.choices(names, weights, k=rng.randint(2, 6))))
        paper = {"id": f"Gen{num:07d}", "num": num, "title": " ".join(words).capitalize(),
                 "authors": [(a, rng.choice(INSTITUTIONS)) for a in people], "abstract": " ".join(sentences),
                 "area": area, "subarea": sub, "keywords": rng.sample(KEYWORDS, rng.randint(1, 3)), "type": kind,
                 "track": "Datasets and Benchmarks" if area == "Datasets" else "Main"}
        if kind == "oral":
            results.append(program_entry(paper, "Oral"))
        results.append(program_entry(paper, "Poster"))
    return {"count": len(results), "next": None, "previous": None, "results": results}


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def fd_targets() -> set[str]:
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            out.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # closed meanwhile (the listing's own descriptor)
            pass
    return out


# --- 1. ingest -----------------------------------------------------------------------------------------------

def model_ceiling(settings, program_path: Path, sample: int) -> tuple[float, float]:
    """docs/s of the model alone on the first `sample` papers, through the Embedder ingest uses.

    Two figures: encoding exactly the chunk texts ingest embeds for them (title + chunk,
    chunks of at most 80 % of the window with one sentence of overlap, so no word is
    cut off), and encoding each paper once as "title. abstract" cut at the model's
    window (what the model alone would do if the end of long abstracts could be lost).
    """
    from ingest.embed import Embedder
    from ingest.parse import parse_file
    from ingest.pipeline import paper_chunks
    from paperbot.records import indexed_text

    embedder = Embedder(settings.embedding)
    papers = parse_file(program_path)[:sample]
    chunks = [indexed_text(p.title, text, p.keywords) for p in papers for _, text, *_ in paper_chunks(p, embedder)]
    whole = [f"{p.title}. {p.abstract}" for p in papers]
    embedder.encode(whole[:8])  # load and warm
    rates = []
    for texts in (chunks, whole):
        t = time.perf_counter()
        embedder.encode(texts)
        rates.append(len(papers) / (time.perf_counter() - t))
    return rates[0], rates[1]


def run_ingest(env: dict, program: Path, n: int) -> tuple[float, str]:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "bot.cli", "ingest", str(program)], capture_output=True, text=True,
                          env=env, cwd=REPO)
    wall = time.perf_counter() - t
    if proc.returncode:
        raise SystemExit(f"ingest failed: {proc.stderr[-800:]}")
    return wall, proc.stdout.strip().splitlines()[-1]


# --- 2. filter cost ------------------------------------------------------------------------------------------

def filter_cost(settings, questions: list[str], program: dict) -> None:
    from bot.runtime import open_library
    from retrieval.filters import Filters

    first = program["results"][0]
    author = first["authors"][0]["fullname"]
    cases = {"type=oral": Filters(type="oral"), "type=poster": Filters(type="poster"),
             f"author={author}": Filters(author=author),
             f"area={first['topic'].split('->')[0]}": Filters(area=first["topic"].split("->")[0])}
    with open_library(settings) as lib:
        lib.search(questions[0])
        t = time.perf_counter()
        lib.search(questions[0], filters=Filters(type="oral"))
        first = time.perf_counter() - t
        times: dict[str, list[float]] = {"unfiltered": [], **{k: [] for k in cases}}
        for q in questions:
            for name, f in [("unfiltered", None), *cases.items()]:
                t = time.perf_counter()
                lib.search(q, filters=f) if f else lib.search(q)
                times[name].append(time.perf_counter() - t)
    base = statistics.median(times["unfiltered"])
    print(f"filters ({len(questions)} questions each, interleaved): unfiltered p50 {base * 1000:.0f} ms; the first "
          f"filtered search, which indexes the papers' values and reads its chunks' vectors, {first * 1000:.0f} ms")
    for name in cases:
        p50 = statistics.median(times[name])
        print(f"  {name}: p50 {p50 * 1000:.0f} ms = {p50 / base:.2f}x unfiltered")


# --- 3-4. the bot: concurrency, then a soak (run in its own process) ------------------------------------------

async def serve(store: Path, questions: list[str], concurrent: int, minutes: float, csv: Path) -> None:
    from bot.app.client import PaperBot
    from bot.harness import Harness
    from bot.runtime import open_services
    from paperbot.settings import Settings

    settings = Settings.from_env({**os.environ, "CHROMA_PATH": str(store), "DISCORD_RATE_LIMIT": "10000"})
    async with open_services(settings, warm_up=True, serving=True) as services, Harness(PaperBot(services)) as h:
        stop = asyncio.Event()
        monitor = asyncio.create_task(lag_monitor(stop))
        await asyncio.sleep(0.05)
        start = time.perf_counter()
        exchanges = [h.feed_interaction(h.slash_payload("ask", question=questions[i % len(questions)],
                                                        user=h.user(10**17 + i, f"user{i}")))
                     for i in range(concurrent)]
        await asyncio.gather(*(h.wait(ex) for ex in exchanges))
        wall = time.perf_counter() - start
        stop.set()
        lag = await monitor
        latency = [ex.last_latency() for ex in exchanges]
        cited = sum(1 for ex in exchanges if "[1]" in ex.messages[-1]["embeds"][0].get("description", ""))
        failed = sum(1 for ex in exchanges if "went wrong" in json.dumps(ex.messages).lower())
        print(f"concurrency: {concurrent} simultaneous /ask, {cited} answered with citations, {failed} errors, "
              f"wall {wall:.1f} s; "
              f"latency p50 {statistics.median(latency):.2f} s p95 {percentile(latency, 95):.2f} s; "
              f"max event-loop lag {lag * 1000:.0f} ms", flush=True)
        if minutes <= 0:
            return
        await soak(h, questions, minutes, csv)


async def soak(h, questions: list[str], minutes: float, csv: Path, every: float = 5.0) -> None:
    """One question every second (3 in flight at most), /ask and /search alternating, every other search filtered
    by presentation type; RSS and open descriptors sampled every `every` s."""
    start = time.perf_counter()
    end = start + minutes * 60
    samples: list[tuple[float, float, int, int]] = []
    errors, done, latency = 0, 0, []
    in_flight: set[asyncio.Task] = set()

    async def one(i: int) -> None:
        nonlocal errors, done
        j = i % len(questions)  # each pass over the questions repeats the same requests
        options = {"question": questions[j]} if j % 2 == 0 else {"query": questions[j]}
        if j % 4 == 3:  # every other search is filtered
            options["type"] = ("oral", "spotlight", "poster")[j // 4 % 3]
        payload = h.slash_payload("ask" if j % 2 == 0 else "search", **options,
                                  user=h.user(10**17 + i % 50, f"user{i % 50}"))
        ex = h.feed_interaction(payload)
        await h.wait(ex)
        done += 1
        latency.append(ex.last_latency())
        if not ex.messages or "went wrong" in json.dumps(ex.messages).lower():
            errors += 1
        h.forget(ex, payload)  # the fake Discord's record of it is not the bot's memory

    i, next_sample = 0, start
    first_pass = None  # when every question has been asked once: caches are warm from then on
    warm_fds: set[str] = set()
    while time.perf_counter() < end:
        now = time.perf_counter()
        if now >= next_sample:
            samples.append((now - start, rss_mb(children=True), open_fds(), threading.active_count()))
            next_sample += every
        if len(in_flight) < 3:
            task = asyncio.create_task(one(i))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
            i += 1
            if first_pass is None and i >= len(questions):
                first_pass = time.perf_counter() - start
                warm_fds = fd_targets()
        await asyncio.sleep(1.0)
    await asyncio.gather(*in_flight)
    samples.append((time.perf_counter() - start, rss_mb(children=True), open_fds(), threading.active_count()))
    csv.write_text("seconds,rss_mb,open_fds,threads\n" + "".join(f"{t:.1f},{r:.1f},{f},{n}\n" for t, r, f, n in samples))
    warm_up = first_pass if first_pass is not None else minutes * 60 / 4
    warm = [s for s in samples if s[0] >= warm_up] or samples[-1:]
    growth = (warm[-1][1] - warm[0][1]) / warm[0][1] * 100
    fds = sorted({s[2] for s in warm})
    print(f"soak: {minutes:g} min, {done} questions answered, {errors} errors, latency p50 "
          f"{statistics.median(latency):.2f} s p95 {percentile(latency, 95):.2f} s", flush=True)
    why = "every question asked once" if first_pass is not None else "a quarter of the run"
    print(f"  warm-up: {why} ({warm_up:.0f} s); RSS after warm-up {warm[0][1]:.0f} MB -> end "
          f"{warm[-1][1]:.0f} MB ({growth:+.1f} %), peak {max(s[1] for s in samples):.0f} MB; open fds after warm-up: "
          f"{fds[0]}..{fds[-1]}", flush=True)
    own = rss_mb()
    print(f"  RSS is the bot's process and its children: at the end {own:.0f} MB the bot's, "
          f"{samples[-1][1] - own:.0f} MB its store's child process (CHROMA_CHILD)", flush=True)
    if warm_fds:
        opened, closed = sorted(fd_targets() - warm_fds), sorted(warm_fds - fd_targets())
        print(f"  descriptors opened after warm-up and still open: {opened or 'none'}; closed: {closed or 'none'}")


COLORS = ("#2b6cb0", "#c05621", "#2f855a", "#6b46c1")


def svg_curve(curves: list[tuple[str, Path]], out: Path, title: str) -> None:
    """RSS curves of soaks (label, CSV) as a small SVG line chart (no plotting library needed)."""
    series = [(label, [tuple(map(float, line.split(","))) for line in csv.read_text().splitlines()[1:] if line])
              for label, csv in curves]
    every = [r for _, rows in series for r in rows]
    w, h, pad = 640, 280, 48
    t_max = max(r[0] for r in every) or 1.0
    step = max(50, round(max(r[1] for r in every) / 5 / 50) * 50)  # MB between grid lines
    top = (int(max(r[1] for r in every) * 1.1 // step) + 1) * step
    x = lambda t: pad + (w - 2 * pad) * t / t_max  # noqa: E731
    y = lambda mb: h - pad - (h - 2 * pad) * mb / top  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
             f'font-size="11"><rect width="100%" height="100%" fill="white"/>',
             f'<text x="{w / 2}" y="18" text-anchor="middle" font-size="13">{title}</text>']
    for v in range(0, top + 1, step):
        parts.append(f'<line x1="{pad}" x2="{w - pad}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#ddd"/>'
                     f'<text x="{pad - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.0f}</text>')
    for v in (t_max * k / 4 for k in range(5)):
        parts.append(f'<text x="{x(v):.1f}" y="{h - pad + 16}" text-anchor="middle">{v / 60:.0f}</text>')
    for n, (label, rows) in enumerate(series):
        color = COLORS[n % len(COLORS)]
        points = " ".join(f"{x(row[0]):.1f},{y(row[1]):.1f}" for row in rows)
        parts += [f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{points}"/>',
                  f'<line x1="{pad + 10}" x2="{pad + 30}" y1="{34 + 14 * n}" y2="{34 + 14 * n}" stroke="{color}" '
                  f'stroke-width="2"/><text x="{pad + 36}" y="{38 + 14 * n}">{label}</text>']
    parts += [f'<text x="{w / 2}" y="{h - 10}" text-anchor="middle">minutes</text>',
              f'<text x="14" y="{h / 2}" transform="rotate(-90 14 {h / 2})" text-anchor="middle">RSS (MB)</text>',
              "</svg>"]
    out.write_text("\n".join(parts) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--papers", type=int, default=6000)
    ap.add_argument("--workdir", type=Path, default=None, help="keep the program and store here")
    ap.add_argument("--scifact", type=Path, default=SCIFACT)
    ap.add_argument("--skip-ingest", action="store_true", help="reuse the store in --workdir")
    ap.add_argument("--sample", type=int, default=200, help="papers the model alone encodes, for the baseline")
    ap.add_argument("--baseline-only", action="store_true", help="only the model-alone baseline on --workdir's program")
    ap.add_argument("--filters-only", action="store_true", help="only the filter costs on --workdir's store")
    ap.add_argument("--concurrent", type=int, default=20)
    ap.add_argument("--soak-minutes", type=float, default=20)
    ap.add_argument("--picture", type=Path, default=None, help="write the soak's RSS curve here (SVG)")
    ap.add_argument("--plot", nargs="+", default=None, metavar="LABEL=CSV",
                    help="only draw these soaks' CSVs into --picture")
    ap.add_argument("--serve", type=Path, default=None, help=argparse.SUPPRESS)  # internal: the bot process
    args = ap.parse_args()
    questions = []  # the claims whose sentences the abstracts are made of, then the bundled questions
    if (args.scifact / "queries.jsonl").exists():
        questions += [json.loads(x)["text"] for x in (args.scifact / "queries.jsonl").read_text().splitlines()[:200]]
    questions += [json.loads(x)["question"] for x in
                  (REPO / "benchmarks/data/bundled_questions.jsonl").read_text().splitlines() if x]
    if args.plot:
        svg_curve([(label, Path(csv)) for label, _, csv in (p.rpartition("=") for p in args.plot)], args.picture,
                  "paperbot bot process RSS during soaks")
        return 0
    if args.serve:
        asyncio.run(serve(args.serve, questions, args.concurrent, args.soak_minutes,
                          args.serve.parent / "soak.csv"))
        return 0

    from paperbot.settings import Settings

    work = args.workdir or Path(tempfile.mkdtemp(prefix="paperbot-conf-"))
    work.mkdir(parents=True, exist_ok=True)
    program_path, store = work / "program.json", work / "store"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHROMA_", "PAPERBOT_", "EMBEDDING_"))}
    env.update(CHROMA_PATH=str(store))
    settings = Settings.from_env(env)
    if not (args.skip_ingest or args.baseline_only or args.filters_only):
        program = generate_program(args.papers, sentence_pool(args.scifact), seed=7)
        program_path.write_text(json.dumps(program, ensure_ascii=False))
    program = json.loads(program_path.read_text())
    papers = {e["id"]: e for e in program["results"]}
    print(f"program: {len(papers)} papers ({len(program['results'])} entries), mean abstract "
          f"{statistics.mean(len(e['abstract']) for e in papers.values()):.0f} characters; backend "
          f"{settings.embedding.backend}", flush=True)
    if args.baseline_only:
        chunks, whole = model_ceiling(settings, program_path, args.sample)
        print(f"model alone on {args.sample} papers: {chunks:.2f} docs/s on the chunks ingest embeds, "
              f"{whole:.2f} docs/s on 'title. abstract' cut at its window")
        return 0
    if args.filters_only:
        filter_cost(settings, questions[:40], program)
        return 0
    if not args.skip_ingest:
        import shutil

        shutil.rmtree(store, ignore_errors=True)
        before = model_ceiling(settings, program_path, args.sample)
        wall, summary = run_ingest(env, program_path, len(papers))
        after = model_ceiling(settings, program_path, args.sample)
        rate = len(papers) / wall
        ceiling = (before[0] + after[0]) / 2
        print(f"ingest: {len(papers)} papers in {wall:.0f} s = {rate:.2f} docs/s ({summary})")
        print(f"  model alone on the chunks ingest embeds for {args.sample} of the papers: {before[0]:.2f} docs/s "
              f"before, {after[0]:.2f} after; the pipeline runs at {rate / ceiling:.2f}x the model alone")
        print(f"  model alone on 'title. abstract' cut at its window: {before[1]:.2f} / {after[1]:.2f} docs/s",
              flush=True)
    filter_cost(settings, questions[:40], program)
    proc = subprocess.run([sys.executable, "-m", "benchmarks.conference_bench", "--serve", str(store),
                           "--concurrent", str(args.concurrent), "--soak-minutes", str(args.soak_minutes)],
                          env=env, cwd=REPO)
    if proc.returncode:
        return proc.returncode
    if args.soak_minutes > 0 and args.picture:
        svg_curve([("bot process", work / "soak.csv")], args.picture,
                  f"paperbot bot process, {len(papers):,} papers: RSS over a {args.soak_minutes:g}-minute soak")
        print(f"picture: {args.picture}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
