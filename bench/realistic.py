"""The realistic profile: a home built by `learn import`, with the mix of real use.

    python bench/realistic.py OUT_DIR --entries 100000 --projects 1000 [--seed 7]

writes `OUT_DIR/export.json` (the portable format of engine/exchange/) and `OUT_DIR/work`
(one folder per project, as bench/generate.py). The runner imports the file into an empty home
(that is the `import` figure) and measures everything else on the home it built.

What differs from bench/generate.py (the synthetic profile, kept for continuity), and why:
- project sizes follow a steeper Zipf law (s = 1): a few busy projects, a very long tail;
- 28 % of the errors come from a shared pool of popular failures (same key in many projects);
- a fix repeats with variations: 20 % of a project's errors are a key it already has, with the
  fix worded differently or a different command (import merges them, as a real store does);
- alternatives for one error: a popular failure is fixed one of three ways across projects
  (`pip install x` / `uv add x` / `poetry add x`), which promotion must keep as alternatives,
  never as conflicts; its count of conflicts on this home is the check of that model;
- more preferences (14 % of the entries), some of them in both stances ("use pnpm" / "use
  npm") across projects, the contradictions that are real conflicts;
- bulk imports: a team's file of 60 learnings imported into a fifth of the projects
  (`source: import:team.json`), the same texts many times over;
- 15 % archived, as before, and the `docker` topic in ~2 % of the entries.
The file holds `entries` entries; the home holds fewer learnings after merging (reported).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.generate import ARCHIVED_SHARE, DAY, DOCKER_SHARE, Generator, ProjectInfo, Summary, iso

SHARED_ERROR_SHARE = 0.28
REPEAT_SHARE = 0.20
GLOBAL_SHARE = 0.04
TEAM_FILE_SIZE = 60
TEAM_FILE_REACH = 0.2  # share of projects that imported the team's file (every fifth, if big enough)
ZIPF_S = 1.0
TYPE_WEIGHTS = [("error", 64), ("pattern", 10), ("preference", 14), ("workflow", 12)]

# One popular failure, several ways people fix it: each is an alternative, none a conflict.
ALTERNATIVES = {
    "dependency": ["Install it with uv add {x}", "Install it with poetry add {x}",
                   "Install it into the venv: python -m pip install {x}"],
    "network": ["Retry after checking the VPN", "Use the internal mirror for {x}", "Wait and retry with backoff"],
    "config": ["Copy .env.example to .env and fill in {x}", "Export {x} in the shell profile",
               "Load {x} from direnv (.envrc)"],
}
VARIATIONS = ["", " (again after a rebase)", " — same as last week", "; the CI image needed it too",
              " before running the tests", " in the project's virtualenv"]
# Stances that contradict each other: the conflicts a real home does have.
STANCES = [("Use pnpm for JavaScript dependencies", "Use npm for JavaScript dependencies"),
           ("Use Vitest for unit tests", "Use Jest for unit tests"),
           ("Use tabs for indentation in Go files", "Use spaces for indentation in Go files"),
           ("Always squash commits before merging", "Never squash commits; keep the history")]


@dataclass
class ExportSummary(Summary):
    entries: int = 0
    repeats: int = 0
    team_copies: int = 0
    shared_errors: int = 0
    bytes_export: int = 0
    export: str = ""
    projects_list: list = field(default_factory=list, repr=False)


class RealisticGenerator(Generator):
    """Reuses the synthetic generator's vocabulary and record shape, with the realistic mix."""

    def project_counts(self, total: int) -> list[int]:
        weights = [1 / (i + 1) ** ZIPF_S for i in range(self.n_projects)]
        scale = total / sum(weights)
        counts = [max(1, int(w * scale)) for w in weights]
        counts[0] += total - sum(counts)
        return counts

    def build_export(self, dest: Path) -> ExportSummary:
        started = time.perf_counter()
        s = ExportSummary(home=str(self.home), work=str(self.work), now=self.now, export=str(dest))
        self.summary = s
        projects = self.make_projects()
        self._any_project = projects[0]
        self.write_work_folders(projects)
        team = self._team_file(projects[0])
        n_global = max(1, round(self.n * GLOBAL_SHARE))
        counts = self.project_counts(self.n - n_global)
        doc = {"format": "self-learning-agent", "version": "1.0.0", "exported": iso(self.now),
               "global": [], "projects": {}, "archived": []}
        for i, (p, count) in enumerate(zip(projects, counts, strict=True)):
            with_team = i % round(1 / TEAM_FILE_REACH) == 0 and count > TEAM_FILE_SIZE * 2
            live = self._project_entries(p, count, team if with_team else [], s)
            for rec in live:
                if rec["status"] == "archived":
                    doc["archived"].append(dict(rec, archived_from=p.id))
            doc["projects"][p.id] = {"name": p.name, "root": p.root, "remote": p.remote,
                                     "learnings": [r for r in live if r["status"] != "archived"]}
        for _ in range(n_global):
            owner = self.rng.choice(projects[: max(1, len(projects) // 5)])
            rtype = self._type()
            rec = self.make_record(rtype, owner, [owner.id], self.rng.random() < DOCKER_SHARE, rtype == "error",
                                   False, "global")
            doc["global"].append(rec)
        s.entries = self.n
        s.projects = len(projects)
        s.global_records = n_global
        s.archived = len(doc["archived"])
        bench = projects[0]
        s.bench_project = {"id": bench.id, "name": bench.name, "root": bench.root, "learnings": counts[0],
                           "stack": bench.stack}
        s.projects_list = projects
        data = orjson.dumps(doc)
        dest.write_bytes(data)
        s.bytes_export = len(data)
        s.seconds_write = time.perf_counter() - started
        return s

    def fill_error(self, template, shared: bool, project: ProjectInfo) -> dict:
        self._unique = not shared
        try:
            return super().fill_error(template, shared, project)
        finally:
            self._unique = False

    def _error_key(self, canonical: str, command: str) -> str:
        """A failure nobody else has seen needs a key no other has, not the engine's (1-2 ms a
        call, minutes at 300,000 entries); the popular ones get the engine's own key."""
        if getattr(self, "_unique", False):
            return "err:" + hashlib.sha256(canonical.encode()).hexdigest()[:16]
        return super()._error_key(canonical, command)

    def _type(self) -> str:
        return self.rng.choices([t for t, _ in TYPE_WEIGHTS], [w for _, w in TYPE_WEIGHTS])[0]

    def _project_entries(self, p: ProjectInfo, count: int, team: list, s: ExportSummary) -> list[dict]:
        rng = self.rng
        out: list[dict] = []
        for rec in team:
            out.append(dict(rec, id=self.new_id(self.now - rng.uniform(0, 200) * DAY), projects=[p.id],
                            project=p.name))
        s.team_copies += len(team)
        errors_here: list[dict] = []
        while len(out) < count:
            rtype = self._type()
            archived = rng.random() < ARCHIVED_SHARE
            status = "archived" if archived else "active"
            if rtype == "error" and errors_here and rng.random() < REPEAT_SHARE:
                out.append(self._repeat(rng.choice(errors_here), status))
                s.repeats += 1
                continue
            if rtype == "preference" and rng.random() < 0.3:
                out.append(self._stance(p, status))
                continue
            shared = rtype == "error" and rng.random() < SHARED_ERROR_SHARE
            rec = self.make_record(rtype, p, [p.id], rng.random() < DOCKER_SHARE, shared, archived, status)
            if shared:
                s.shared_errors += 1
                self._alternative(rec)
            if rtype == "error":
                errors_here.append(rec)
            out.append(rec)
        return out

    def _repeat(self, rec: dict, status: str) -> dict:
        """The same failure seen again, its fix worded a little differently."""
        rng = self.rng
        t = self.times(status == "archived")
        return dict(rec, id=self.new_id(t["_created"]), fix=rec["fix"] + rng.choice(VARIATIONS),
                    frequency=1 + int(rng.expovariate(0.6)), created=t["created"], last_used=t["last_used"],
                    updated=t["last_used"], status=status)

    def _alternative(self, rec: dict) -> None:
        """A popular failure fixed one of the ways people fix it."""
        ways = ALTERNATIVES.get(rec["category"])
        if not ways:
            return
        x = rec["fix"].rsplit(" ", 1)[-1]
        way = self.rng.choice(ways).format(x=x)
        rec["fix"] = way
        rec["fix_command"] = way.split(": ", 1)[-1] if ":" in way else rec.get("fix_command", "")

    def _stance(self, p: ProjectInfo, status: str) -> dict:
        rng = self.rng
        text = rng.choice(rng.choice(STANCES))
        rec = self.make_record("preference", p, [p.id], False, False, status == "archived", status)
        rec.update(context=text, fix=text, key=self.text_key(text), category="tooling")
        return rec

    def _team_file(self, owner: ProjectInfo) -> list[dict]:
        """The learnings of a team's shared file: imported as they are into many projects."""
        out = []
        for _ in range(TEAM_FILE_SIZE):
            rtype = self._type()
            rec = self.make_record(rtype, owner, [owner.id], False, rtype == "error", False, "active")
            rec["source"] = "import:team.json"
            out.append(rec)
        return out


def generate_export(out: Path, entries: int, projects: int, seed: int = 7, now: float | None = None
                    ) -> tuple[RealisticGenerator, ExportSummary]:
    import shutil

    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    gen = RealisticGenerator(out, entries, projects, seed, now)
    return gen, gen.build_export(out / "export.json")


def finish_home(gen: RealisticGenerator, summary: ExportSummary) -> None:
    """What an import does not bring: the session buffers of the projects' recent sessions,
    and the counts of the imported home (learnings after merging)."""
    gen.layout.ensure()
    summary.sessions = gen._write_sessions(summary.projects_list)
    from learn_cli.store.api import Store

    store = Store(gen.home, warn_stderr=False)
    try:
        store.refresh(loads=orjson.loads)
        db = store.index.db
        summary.learnings = db.execute("SELECT count(*) FROM learnings").fetchone()[0]
        summary.archived = db.execute(
            "SELECT count(*) FROM learnings WHERE scope IN ('archive', 'global-archive')").fetchone()[0]
        summary.global_records = db.execute("SELECT count(*) FROM learnings WHERE scope = 'global'").fetchone()[0]
        summary.live = summary.learnings - summary.archived
        summary.bench_project["learnings"] = db.execute(
            "SELECT count(*) FROM learnings WHERE scope = 'project' AND pid = ?",
            (summary.bench_project["id"],)).fetchone()[0]
        summary.shared_keys = db.execute(
            "SELECT count(*) FROM (SELECT key FROM learnings WHERE scope = 'project' GROUP BY key "
            "HAVING count(DISTINCT pid) >= 2)").fetchone()[0]
        summary.docker_records = db.execute(
            "SELECT count(*) FROM learnings WHERE data LIKE '%docker%'").fetchone()[0]
    finally:
        store.close()
    summary.bytes_jsonl = sum(f.stat().st_size for f in Path(gen.home).rglob("*.jsonl"))
    summary.bytes_index = sum(f.stat().st_size for f in Path(gen.home, "global").glob("index.db*"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--entries", type=int, default=1000)
    ap.add_argument("--projects", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    _, summary = generate_export(Path(args.out), args.entries, args.projects, args.seed)
    summary.projects_list = []
    print(json.dumps(summary.as_dict(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
