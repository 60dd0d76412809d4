"""Who is calling (caller.py), how a token is verified (verifier.py, the oidc extra)
and how a client learns to sign in (signin.py)."""
