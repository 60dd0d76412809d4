"""HTTP plumbing: the server under the app (hypercorn's per-connection server, timed and
bounded).

`hypercorn_seam` runs the accept loop; each connection is served by `protocol` (with
`hypercorn_seam`, the modules on hypercorn's internals), its requests read and its
responses framed by `framing` (their header fields by `fields`, its errors in `errors`),
each request handed to the app by `request_stream`. Each connection's stream and ASGI
layer are in `connection`, its deadlines in `timer`, the listener that waits out a
shortage of descriptors in `listener`, and the file limit the configured limits need in
`descriptors`. What hypercorn imports for what the adapter never asks of it (HTTP/2,
WebSockets, configuration files) is stood in for by `unused` as this package is imported,
and its HTTP/1.1 protocol's module replaced by `hypercorn_h11`, whose H11Protocol is
`protocol`'s.
"""

from .unused import defer_unused

defer_unused()  # before hypercorn's protocol package or config is imported: see unused.py
