"""The memory budget's ledger: sequences of asks, give-backs, keeps and releases, each
caller's bytes within its share."""

from __future__ import annotations

from n8n_a2a.budget.ledger import GRANTED, NEVER, WAIT, Ask, Ledger, Release, caller_key

MiB = 1024 * 1024


def ask(caller: str, size: int, *, urgent: bool = False, read: bool = False) -> Ask:
    return Ask(caller, size * MiB, urgent=urgent, read=read)


def test_asks_that_fit_are_granted_and_counted_by_holder_and_caller() -> None:
    ledger = Ledger(10 * MiB)
    assert ledger.ask("a", ask("ann", 4)) == GRANTED
    assert ledger.ask("b", ask("bob", 6)) == GRANTED
    assert (ledger.held, ledger.holds("a"), ledger.caller_holds("bob")) == (
        10 * MiB,
        4 * MiB,
        6 * MiB,
    )
    ledger.give_back("a", "ann")
    ledger.give_back("a", "ann")  # nothing the second time
    assert (ledger.held, ledger.holds("a"), ledger.caller_holds("ann")) == (6 * MiB, 0, 0)


def test_a_small_ask_is_never_kept_waiting_behind_a_large_one_that_does_not_fit() -> None:
    ledger = Ledger(10 * MiB)
    assert ledger.ask("a", ask("ann", 8)) == GRANTED
    assert ledger.ask("b", ask("bob", 5)) == WAIT
    assert ledger.ask("c", ask("cid", 1)) == GRANTED  # first come is not first served
    assert ledger.waiting == 1


def test_the_line_is_asked_again_callers_holding_least_first() -> None:
    ledger = Ledger(10 * MiB)
    ledger.ask("a1", ask("ann", 5))
    ledger.ask("b1", ask("bob", 5))
    assert ledger.ask("a2", ask("ann", 3)) == WAIT
    assert ledger.ask("c1", ask("cid", 3)) == WAIT
    # ann holds 5 MiB, cid none: cid is asked first, though it came later.
    assert [holder for holder, _ in ledger.in_line()] == ["c1", "a2"]


def test_a_caller_holds_no_more_than_its_share_and_others_are_served() -> None:
    ledger = Ledger(12 * MiB, share=6 * MiB)
    assert ledger.ask("a1", ask("ann", 4)) == GRANTED
    assert ledger.ask("a2", ask("ann", 4)) == WAIT  # 8 MiB past ann's 6: until a1 ends
    assert ledger.ask("b1", ask("bob", 6)) == GRANTED  # room is left for everyone else
    assert ledger.ask("a3", ask("ann", 7)) == NEVER  # past the share alone: never
    ledger.give_back("a1", "ann")
    assert [holder for holder, _ in ledger.in_line()] == ["a2"]
    assert ledger.ask("a2", ask("ann", 4)) == GRANTED


def test_header_only_promises_cost_nothing_bytes_do() -> None:
    """What four connections promising 32 MiB each hold: nothing, until bytes come; and
    once they come, no more than their caller's share."""
    ledger = Ledger(128 * MiB, share=64 * MiB)
    attacker = "peer:10.0.0.9"
    for connection in ("one", "two"):
        for piece in range(32):
            assert ledger.ask(connection, ask(attacker, 1)) == GRANTED, piece
    assert ledger.ask("three", ask(attacker, 1)) == WAIT
    assert ledger.ask("four", ask(attacker, 1)) == WAIT
    assert ledger.caller_holds(attacker) == 64 * MiB
    assert ledger.ask("victim", ask("peer:10.0.0.7", 32)) == GRANTED


def test_a_reply_being_read_goes_before_new_requests_while_it_waits() -> None:
    ledger = Ledger(10 * MiB)
    ledger.ask("request 1", ask("ann", 9))
    assert ledger.ask("reply 1", ask("ann", 1, urgent=True)) == GRANTED
    assert ledger.ask("reply 1", ask("ann", 1, urgent=True)) == WAIT
    ledger.give_back("request 1", "ann", 2 * MiB)
    assert ledger.ask("request 2", ask("bob", 1)) == WAIT  # a reply waits: it goes first
    assert [holder for holder, _ in ledger.in_line()] == ["reply 1", "request 2"]
    assert ledger.ask("reply 1", ask("ann", 1, urgent=True)) == GRANTED
    assert ledger.ask("request 2", ask("bob", 1)) == GRANTED


def test_a_caller_s_own_oldest_results_go_first_then_those_of_callers_past_their_share() -> None:
    ledger = Ledger(10 * MiB, share=5 * MiB)
    ledger.keep("ann old", "ann", 2 * MiB)
    ledger.keep("bob old", "bob", 3 * MiB)
    ledger.keep("ann new", "ann", 2 * MiB)
    ledger.keep("bob new", "bob", 3 * MiB)  # bob keeps 6 MiB: past his share
    assert ledger.ask("a", ask("ann", 2)) == Release(("ann old",))
    ledger.released("ann old", 2 * MiB)
    assert ledger.ask("a", ask("ann", 5)) == Release(("ann new",))  # past ann's share
    ledger.released("ann new", 2 * MiB)
    assert ledger.ask("a", ask("ann", 5)) == Release(("bob old",))  # bob is past his


def test_another_caller_s_results_within_its_share_are_never_released() -> None:
    ledger = Ledger(8 * MiB, share=4 * MiB)
    ledger.keep("ann's", "ann", 3 * MiB)
    ledger.keep("bob's", "bob", 3 * MiB)
    assert ledger.ask("c", ask("cid", 3)) == WAIT  # 2 MiB free; nothing cid may release
    assert ledger.ask("a", ask("ann", 3)) == Release(("ann's",))  # ann's own may go


def test_a_read_releases_nothing_and_is_held_within_its_caller_s_share() -> None:
    """A GetTask of one's own kept task charged it again, and released another caller's."""
    ledger = Ledger(8 * MiB, share=4 * MiB)
    ledger.keep("ann's", "ann", 3 * MiB)
    ledger.keep("bob's", "bob", 3 * MiB)
    assert ledger.ask("read", ask("ann", 4, read=True)) == GRANTED  # past the room: a copy
    assert ledger.ask("read 2", ask("ann", 1, read=True)) == WAIT  # past ann's share held
    assert (ledger.kept, ledger.held) == (6 * MiB, 4 * MiB)
    assert ledger.ask("read 3", ask("bob", 4, read=True)) == GRANTED
    # Reads in flight fill the budget (however many callers read): the next one waits.
    assert ledger.ask("read 4", ask("cid", 1, read=True)) == WAIT


def test_a_copy_already_made_is_forced_and_new_requests_wait_for_it() -> None:
    ledger = Ledger(4 * MiB)
    ledger.force("answer", "ann", 5 * MiB)
    assert ledger.held == 5 * MiB
    assert ledger.ask("request", ask("bob", 1)) == WAIT
    ledger.give_back("answer", "ann", 3 * MiB)
    assert ledger.holds("answer") == 2 * MiB
    assert ledger.ask("request", ask("bob", 1)) == GRANTED


def test_kept_payloads_are_not_released_for_nothing() -> None:
    ledger = Ledger(10 * MiB)
    ledger.keep("done", "ann", 4 * MiB)
    ledger.ask("a", ask("ann", 5))
    assert ledger.ask("b", ask("ann", 7)) == WAIT  # 5 MiB held: releasing would not do
    ledger.give_back("a", "ann")
    assert ledger.ask("b", ask("ann", 7)) == Release(("done",))


def test_a_forgotten_task_is_room_and_small_ones_are_never_released() -> None:
    ledger = Ledger(10 * MiB)
    ledger.keep("small", "ann", 1000)
    ledger.keep("large", "ann", 9 * MiB)
    assert ledger.ask("a", ask("ann", 2)) == Release(("large",))
    ledger.forget("large")
    assert (ledger.kept, ledger.caller_holds("ann")) == (1000, 1000)
    assert ledger.ask("a", ask("ann", 2)) == GRANTED
    assert ledger.ask("b", ask("ann", 8)) == WAIT  # 1000 bytes short, and nothing to release


def test_a_task_kept_again_replaces_what_it_held() -> None:
    ledger = Ledger(10 * MiB)
    ledger.keep("t", "ann", 5 * MiB)
    ledger.keep("t", "ann", 2 * MiB)
    assert (ledger.kept, ledger.caller_holds("ann")) == (2 * MiB, 2 * MiB)
    ledger.released("gone", 5)  # a task the store dropped meanwhile: nothing
    assert ledger.kept == 2 * MiB


def test_a_caller_is_its_owner_or_else_its_address() -> None:
    assert caller_key("oidc:abc", "10.0.0.1") == "oidc:abc"
    assert caller_key(None, "10.0.0.1") == "peer:10.0.0.1"
    assert caller_key(None) == "anonymous"


def test_bodies_half_read_each_waiting_for_the_others_are_a_stall_broken_at_the_least() -> None:
    ledger = Ledger(10 * MiB)
    ledger.ask("one", ask("ann", 6))
    ledger.ask("two", ask("bob", 3))
    assert ledger.ask("one", ask("ann", 2)) == WAIT
    assert ledger.stalled() is None  # "two" holds bytes and still moves on
    assert ledger.ask("new", ask("cid", 1)) == GRANTED  # (room for it all the same)
    assert ledger.ask("two", ask("bob", 2)) == WAIT
    assert ledger.stalled() is None  # "new" holds 1 MiB and moves on
    assert ledger.ask("new", ask("cid", 1)) == WAIT
    assert ledger.stalled() == "new"  # nobody moves: the one holding least goes
    ledger.give_back("new", "cid")
    ledger.leave("new")
    assert ledger.stalled() == "two"  # and then the next: none is left waiting for ever
