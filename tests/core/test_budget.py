"""The memory budget's ledger: sequences of asks, give-backs, keeps and releases."""

from __future__ import annotations

from n8n_a2a.core.budget import GRANTED, NEVER, WAIT, Ledger, Release

MiB = 1024 * 1024


def test_asks_that_fit_are_granted_and_counted_by_holder() -> None:
    ledger = Ledger(10 * MiB)
    assert ledger.ask("a", 4 * MiB) == GRANTED
    assert ledger.ask("b", 6 * MiB) == GRANTED
    assert (ledger.held, ledger.holds("a"), ledger.holds("b")) == (10 * MiB, 4 * MiB, 6 * MiB)
    ledger.give_back("a")
    ledger.give_back("a")  # nothing the second time
    assert (ledger.held, ledger.holds("a")) == (6 * MiB, 0)


def test_an_ask_past_the_budget_waits_in_line_and_the_first_is_told_when_it_fits() -> None:
    ledger = Ledger(10 * MiB)
    assert ledger.ask("a", 8 * MiB) == GRANTED
    assert ledger.ask("b", 5 * MiB) == WAIT
    assert ledger.ask("c", 1 * MiB) == WAIT  # it would fit, but b is ahead of it
    assert (ledger.waiting, ledger.next_in_line()) == (2, None)
    ledger.give_back("a")
    assert ledger.next_in_line() == "b"
    assert ledger.ask("c", 1 * MiB) == WAIT  # still behind b
    assert ledger.ask("b", 5 * MiB) == GRANTED
    assert ledger.next_in_line() == "c"
    assert ledger.ask("c", 1 * MiB) == GRANTED
    assert (ledger.waiting, ledger.held) == (0, 6 * MiB)


def test_a_holder_that_leaves_the_line_lets_the_next_one_go() -> None:
    ledger = Ledger(10 * MiB)
    ledger.ask("a", 8 * MiB)
    assert ledger.ask("b", 9 * MiB) == WAIT
    assert ledger.ask("c", 2 * MiB) == WAIT
    ledger.leave("b")  # canceled, or it waited too long
    assert ledger.next_in_line() == "c"
    assert ledger.ask("c", 2 * MiB) == GRANTED


def test_a_reply_being_read_goes_ahead_of_requests_in_line() -> None:
    ledger = Ledger(10 * MiB)
    ledger.ask("request 1", 9 * MiB)
    assert ledger.ask("request 2", 3 * MiB) == WAIT
    assert ledger.ask("reply 1", 1 * MiB, urgent=True) == GRANTED  # room now: not behind
    assert ledger.ask("reply 1", 1 * MiB, urgent=True) == WAIT
    assert ledger.ask("request 3", 1 * MiB) == WAIT
    ledger.give_back("request 1")
    assert ledger.next_in_line() == "reply 1"
    assert ledger.ask("request 2", 3 * MiB) == WAIT
    assert ledger.ask("reply 1", 1 * MiB, urgent=True) == GRANTED
    assert ledger.next_in_line() == "request 2"


def test_more_than_the_whole_budget_is_never_granted_nor_waited_for() -> None:
    ledger = Ledger(10 * MiB)
    assert ledger.ask("a", 10 * MiB + 1) == NEVER
    assert ledger.ask("reply", 6 * MiB, urgent=True) == GRANTED
    assert ledger.ask("reply", 5 * MiB, urgent=True) == NEVER  # 11 MiB with what it holds
    assert ledger.waiting == 0


def test_kept_payloads_count_and_the_oldest_are_released_to_make_room() -> None:
    ledger = Ledger(10 * MiB)
    ledger.keep("old", 3 * MiB)
    ledger.keep("middle", 3 * MiB)
    ledger.keep("new", 3 * MiB)
    assert (ledger.kept, ledger.held) == (9 * MiB, 0)
    assert ledger.ask("a", 1 * MiB) == GRANTED
    assert ledger.ask("b", 4 * MiB) == Release(("old", "middle"))  # 4 MiB short: two go
    ledger.released("old", 3 * MiB - 100)  # its small parts stay
    ledger.released("middle", 3 * MiB - 100)
    assert ledger.kept == 3 * MiB + 200
    assert ledger.ask("b", 4 * MiB) == GRANTED
    # A task is released once: what is left of it is never offered again.
    assert ledger.ask("c", 3 * MiB) == Release(("new",))


def test_kept_payloads_are_not_released_for_an_ask_that_held_bytes_block_anyway() -> None:
    ledger = Ledger(10 * MiB)
    ledger.keep("done", 4 * MiB)
    ledger.ask("a", 5 * MiB)
    assert ledger.ask("b", 7 * MiB) == WAIT  # 5 MiB held: releasing would not be enough
    ledger.give_back("a")
    assert ledger.next_in_line() == "b"
    assert ledger.ask("b", 7 * MiB) == Release(("done",))


def test_a_forgotten_task_is_room_and_small_ones_are_never_released() -> None:
    ledger = Ledger(10 * MiB)
    ledger.keep("small", 1000)
    ledger.keep("large", 9 * MiB)
    assert ledger.ask("a", 2 * MiB) == Release(("large",))
    ledger.forget("large")
    assert ledger.kept == 1000
    assert ledger.ask("a", 2 * MiB) == GRANTED
    assert ledger.ask("b", 8 * MiB) == WAIT  # 1000 bytes short, and nothing to release


def test_a_task_kept_again_replaces_what_it_held() -> None:
    ledger = Ledger(10 * MiB)
    ledger.keep("t", 5 * MiB)
    ledger.keep("t", 2 * MiB)
    assert ledger.kept == 2 * MiB
    ledger.released("gone", 5)  # a task the store dropped meanwhile: nothing
    assert ledger.kept == 2 * MiB
