"""`python -m n8n_a2a.prebuilt`: the code a start generates, compiled for this interpreter
into generated.FILE. The image's build runs it after pip has installed the package (and
compiled its bytecode); so does bench/targets.py before it times a start."""

from __future__ import annotations

from . import generated


def main() -> None:
    made = generated.record()
    # What a start defines: the command's modules, and the task store it opens.
    import n8n_a2a.__main__
    import n8n_a2a.store.memory.backend  # noqa: F401

    path = generated.write(made)
    print(f"n8n-a2a: {len(made)} pieces of generated code compiled into {path}")


if __name__ == "__main__":
    main()
