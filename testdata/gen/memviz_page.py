#!/usr/bin/env python3
"""Write the HTML page torch.cuda._memory_viz.trace_plot writes for a snapshot (the template and
_format_viz of torch/cuda/_memory_viz.py, PyTorch 2.1 and later: the snapshot pickled again,
padded with NUL bytes to a multiple of 3, base64-encoded into a JSON list of local files).
Usage (from the repository root):
    python3 testdata/gen/memviz_page.py testdata/pytorch/model_reload.pickle > testdata/pytorch/model_reload.trace_plot.html
"""
import base64, json, pickle, sys

TEMPLATE = r"""
<!DOCTYPE html>
<html>
<head>
</head>
<body>
<script type="module">
import {add_local_files} from "https://cdn.jsdelivr.net/gh/pytorch/pytorch@main/torch/utils/viz/MemoryViz.js"
const local_files = $SNAPSHOT
add_local_files(local_files, $VIZ_KIND)
</script>
</body>
"""

with open(sys.argv[1], 'rb') as f:
    data = pickle.load(f)
buffer = pickle.dumps(data)
buffer += b"\x00" * (3 - len(buffer) % 3)
encoded = base64.b64encode(buffer).decode("utf-8")
files = json.dumps([{"name": "snapshot.pickle", "base64": encoded}])
sys.stdout.write(TEMPLATE.replace("$VIZ_KIND", repr("Active Memory Timeline")).replace("$SNAPSHOT", files))
