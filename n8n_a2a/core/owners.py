"""Whose a task is: its owner, an opaque digest, never a token or a subject as such, so a
task table holds no credential and no person's id; it is compared, never shown. The
anonymous caller (no token, in the default mode) is the owner None.

Here, below the stores and the rules that make tasks, which hold owners but know no
caller; auth/ says who is calling, and so whose tasks it may touch.
"""

from __future__ import annotations

import json

#: A task's owner: None for the anonymous caller, else an opaque digest.
Owner = str | None


def token_owner(token: str | None) -> Owner:
    """The default owner: the SHA-256 of the bearer token (a new token is a new owner)."""
    if token is None:
        return None
    import hashlib  # here: a start, and a process only ever called anonymously, do without

    return "token:" + hashlib.sha256(token.encode()).hexdigest()


def subject_owner(issuer: str, subject: str) -> str:
    """The owner of a verified token: its issuer and subject, whatever token carries them, so
    a caller whose token is refreshed keeps its tasks."""
    import hashlib  # as token_owner's

    return "oidc:" + hashlib.sha256(json.dumps([issuer, subject]).encode()).hexdigest()
