from issuebench.setup.pyversions import rank_pythons, satisfies

INSTALLED = ["3.13", "3.12", "3.11", "3.10", "3.9", "3.8", "3.7", "3.6", "2.7"]


def test_specifiers() -> None:
    assert satisfies("3.6", ">=3.6.1")            # some 3.6 release satisfies it
    assert not satisfies("3.8", "<3.8")
    assert satisfies("3.7", ">=2.7, !=3.0.*, !=3.1.*")
    assert not satisfies("3.1", ">=2.7, !=3.0.*, !=3.1.*")
    assert not satisfies("2.7", ">=3")
    assert satisfies("3.12", "~=3.7") and not satisfies("3.6", "~=3.7")


def test_no_python_released_after_the_date() -> None:
    ranked = rank_pythons([">=3.6"], [], [], "2020-06-01", INSTALLED)
    assert "3.9" not in ranked and "3.13" not in ranked
    assert ranked[0] == "3.7"        # 3.8 (Oct 2019) had not been adopted for long by June 2020


def test_ci_listed_versions_win_and_requires_python_bounds() -> None:
    assert rank_pythons([], ["3.8"], [], "2020-06-01", INSTALLED)[0] == "3.8"
    assert rank_pythons(["<3.8"], ["3.8", "3.7"], [], "2023-01-01", INSTALLED)[0] == "3.7"
    assert rank_pythons([], [], [], None, INSTALLED)[0] == "3.13"


def test_commit_older_than_every_usable_python_gets_the_nearest_one() -> None:
    ranked = rank_pythons([], [], [], "2014-03-15", ["3.13", "3.8", "3.6", "2.7"])
    assert ranked == ["3.6", "3.8", "3.13"]       # never 2.7 (below the oldest policy), never 3.13 first
