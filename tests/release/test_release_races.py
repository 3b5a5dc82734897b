"""Two pushes at once (issue 21): the order rule holds under concurrency (``main`` never moves back
to an older version, nor to another build of a version already there), and the push that loses
says what happened. The interleavings are made deterministic: one push runs from start to end
while the other sits between its plan and its commit, or between its commit and its tag
(``helpers.hub_clients.interleaved_publish``). All cases run in one client process, one repository
each, on one loopback Hub."""

from __future__ import annotations

import pytest

from helpers import hub_clients
from helpers.client import run_in_client
from helpers.folders import make_folder

pytestmark = pytest.mark.slow  # end to end: each test takes seconds to minutes

CASES = {
    # name: (outer folder seed/version, inner seed/version, where the inner push runs)
    "older_while_newer_awaits_its_tag": ((2, "1.2.0"), (3, "1.1.0"), "before_tag"),
    "older_lands_before_a_planned_newer": ((2, "1.2.0"), (3, "1.1.0"), "before_commit"),
    "newer_lands_before_a_planned_older": ((3, "1.1.0"), (2, "1.2.0"), "before_commit"),
    "same_version_other_build_committed_first": ((4, "1.1.0"), (5, "1.1.0"), "before_commit"),
    "same_version_other_build_awaiting_its_tag": ((4, "1.1.0"), (5, "1.1.0"), "before_tag"),
    "same_build_twice_before_commit": ((4, "1.1.0"), (4, "1.1.0"), "before_commit"),
    "same_build_twice_before_tag": ((4, "1.1.0"), (4, "1.1.0"), "before_tag"),
}


@pytest.fixture(scope="module")
def raced(tmp_path_factory):
    from helpers.hub import DEFAULT_TOKEN, HubServer

    tmp = tmp_path_factory.mktemp("races")
    folders, cases = {}, {}
    for name, (outer, inner, at) in CASES.items():
        made = [make_folder(tmp / name / f"{who}-{seed}", version=v, seed=seed)
                for who, (seed, v) in (("outer", outer), ("inner", inner))]
        base = make_folder(tmp / name / "base", version="1.0.0", seed=1)
        folders[name] = made
        cases[f"tinyOrg/{name}"] = {"base": [str(base), "1.0.0"], "outer": [str(made[0]), outer[1]],
                                    "inner": [str(made[1]), inner[1]], "at": at}
    with HubServer(token=DEFAULT_TOKEN) as hub:
        env = hub.client_env(tmp / "hf_home", token=DEFAULT_TOKEN)
        got = run_in_client(env, hub_clients.races, cases).result
        yield hub, {name: got[f"tinyOrg/{name}"] for name in CASES}, folders


def _main_is(hub, name, folder):
    files = hub.files(f"tinyOrg/{name}", "main")
    return all(files.get(p.relative_to(folder).as_posix()) == p.read_bytes() for p in folder.rglob("*") if p.is_file())


def test_an_older_version_cannot_move_main_back_while_a_newer_one_awaits_its_tag(raced):
    hub, got, folders = raced
    name = "older_while_newer_awaits_its_tag"
    g = got[name]
    assert g["base"]["ok"]["action"] == "committed" and g["outer"]["ok"]["action"] == "committed"
    err = g["inner"]["error"]
    assert "main holds the build of 1.2.0" in err and "would move main back" in err and "not tagged yet" in err, err
    assert set(g["state"]["tags"]) == {"v1.0.0", "v1.2.0"}
    assert g["state"]["main"] == g["outer"]["ok"]["commit"] == g["state"]["tags"]["v1.2.0"]
    assert _main_is(hub, name, folders[name][0])


def test_a_newer_version_planned_before_an_older_push_still_lands_on_top(raced):
    """The older push commits and tags while the newer one sits between its plan and its commit:
    the newer commit is conditional on the main it planned against (412), so it plans again."""
    hub, got, folders = raced
    name = "older_lands_before_a_planned_newer"
    g = got[name]
    assert g["inner"]["ok"]["action"] == "committed" and g["outer"]["ok"]["action"] == "committed", g
    assert set(g["state"]["tags"]) == {"v1.0.0", "v1.1.0", "v1.2.0"}
    assert g["state"]["main"] == g["state"]["tags"]["v1.2.0"] and _main_is(hub, name, folders[name][0])


def test_an_older_push_planned_before_a_newer_one_is_refused_when_it_commits(raced):
    hub, got, folders = raced
    name = "newer_lands_before_a_planned_older"
    g = got[name]
    assert g["inner"]["ok"]["action"] == "committed"
    err = g["outer"]["error"]
    assert "1.2.0" in err and "would move main back" in err and "No tag was created" not in err, err
    assert set(g["state"]["tags"]) == {"v1.0.0", "v1.2.0"} and _main_is(hub, name, folders[name][1])


@pytest.mark.parametrize("name", ["same_version_other_build_committed_first",
                                  "same_version_other_build_awaiting_its_tag"])
def test_the_losing_push_of_the_same_version_says_the_truth(raced, name):
    hub, got, folders = raced
    g = got[name]
    first = CASES[name][2] == "before_commit"  # the inner push ran before the outer one committed
    winner, loser = ("inner", "outer") if first else ("outer", "inner")
    won, err = g[winner]["ok"], g[loser]["error"]
    assert "No tag was created" not in err and "re-run the same command" not in err, err
    if first:  # the other push published v1.1.0 first
        assert "tag v1.1.0 already exists" in err and "tags are never moved" in err, err
    else:  # the other push's commit is on main, its tag not yet made
        assert "main holds another build of v1.1.0" in err and "not tagged yet" in err, err
    assert g["state"]["tags"]["v1.1.0"] == won["commit"] == g["state"]["main"]
    assert _main_is(hub, name, folders[name][0 if winner == "outer" else 1])


@pytest.mark.parametrize("name", ["same_build_twice_before_commit", "same_build_twice_before_tag"])
def test_two_pushes_of_the_same_build_both_succeed(raced, name):
    g = raced[1][name]
    assert "ok" in g["outer"] and "ok" in g["inner"], g
    assert g["outer"]["ok"]["commit"] == g["inner"]["ok"]["commit"] == g["state"]["tags"]["v1.1.0"]
    assert g["state"]["commits"] == 3  # the Hub's initial commit, v1.0.0, v1.1.0: one commit for both pushes
