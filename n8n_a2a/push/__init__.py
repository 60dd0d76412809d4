"""Push notifications: every update of a task POSTed to the receivers its callers registered.

The configs live in the store, beside the tasks (store/api.py's `PushConfigStore`, one
of each backend's stores); `deliverer.Deliverer` hears every event of a task with
configs and delivers it to each config's receiver, in order, with retries, never holding
up the task, as the config's `route.Route` decides (sans-I/O: events in, actions out);
`guard` decides where a POST may go, after a lookup that `lookups` runs in threads of
its own;
`service.PushNotifications` is what the JSON-RPC methods and the executor's inline
configs call.
"""
