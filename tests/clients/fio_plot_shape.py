"""Runs fio-plot (its own main, command line unchanged) and writes the shape of the data it
parsed from fio's output to the JSON file named by FIO_PLOT_SHAPE: the keys of every mapping,
the type of every scalar, and the length of every list of records (lists of numbers, whose
length is the run's sample count, are given by their item type only; the records of a
list are merged into one shape). tests/it/clients.rs
compares these shapes between fio 3.33's output and iolens'. Charts are drawn with Agg."""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")

import fio_plot  # noqa: E402
from fio_plot import getdata  # noqa: E402


def merge(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return {key: merge(a[key], b[key]) if key in a and key in b else a.get(key, b.get(key))
                for key in sorted(set(a) | set(b))}
    if a == b:
        return a
    return "|".join(sorted(set(str(a).split("|")) | set(str(b).split("|"))))


def shape(value):
    if isinstance(value, dict):
        return {str(key): shape(item) for key, item in value.items()}
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        items = [shape(item) for item in value]
        if all(isinstance(item, str) for item in items):
            return "list of " + "|".join(sorted(set(items)))
        merged = items[0]
        for item in items[1:]:
            merged = merge(merged, item)
        return {"records": len(items), "each": merged}
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


parsed_routes = getdata.get_routing_dict


def routes():
    table = parsed_routes()
    for entry in table.values():
        read = entry["get_data"]

        def recorded(settings, read=read):
            data = read(settings)
            with open(os.environ["FIO_PLOT_SHAPE"], "w") as out:
                json.dump(shape(data), out, sort_keys=True, indent=1)
            return data

        entry["get_data"] = recorded
    return table


getdata.get_routing_dict = routes
sys.argv[0] = "fio-plot"
fio_plot.main()
