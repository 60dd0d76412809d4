"""What a start would make anew each time, made once: the code dataclasses and attrs
generate, compiled at the build (`python -m n8n_a2a.prebuilt`) and read by the command."""
