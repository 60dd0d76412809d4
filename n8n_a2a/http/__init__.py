"""HTTP plumbing: the server under the app (hypercorn's HTTP/1.1 per connection, timed and
bounded).

`hypercorn_seam` (the one module on hypercorn's internals) runs the accept loop; each
connection's stream and ASGI layer are in `connection`, its deadlines in `timer`, the
listener that waits out a shortage of descriptors in `listener`, and the file limit the
configured limits need in `descriptors`. hypercorn's modules for HTTP/2 and WebSockets,
which the adapter refuses, are stood in for by `unserved` as this package is imported.
"""

from .unserved import defer_unserved

defer_unserved()  # before the seam imports hypercorn's protocol package: see unserved.py
