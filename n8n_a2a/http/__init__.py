"""HTTP plumbing: the server under the app (hypercorn's HTTP/1.1 per connection, timed and
bounded).

`hypercorn_seam` (the one module on hypercorn's internals) runs the accept loop; each
connection's stream and ASGI layer are in `connection`, its deadlines in `timer`, the
listener that waits out a shortage of descriptors in `listener`, and the file limit the
configured limits need in `descriptors`.
"""
