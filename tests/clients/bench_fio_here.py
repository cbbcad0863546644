"""Runs fio-plot's bench-fio unchanged but for one path: the job file it hands to fio.

bench-fio writes that file to /tmp/<target>-tmpjobfile.fio (runfio.run_fio), outside a
test's scratch space; here it is written into, and given to fio from, the directory
named by BENCH_FIO_JOB_DIR. Usage: python bench_fio_here.py BENCH-FIO-ARGS...
"""

import os
import sys

from bench_fio import main
from bench_fio.benchlib import generatefio, runfio

JOB_DIR = os.environ["BENCH_FIO_JOB_DIR"]


def moved(path):
    """bench-fio's job file path, moved into JOB_DIR; anything else as it is."""
    if path.startswith("/tmp/") and path.endswith("-tmpjobfile.fio"):
        return os.path.join(JOB_DIR, os.path.basename(path))
    return path


write_job_file = generatefio.generate_fio_job_file
run_command = runfio.run_raw_command
generatefio.generate_fio_job_file = lambda settings, benchmark, output, job_file: write_job_file(
    settings, benchmark, output, moved(job_file)
)
runfio.run_raw_command = lambda command, *rest: run_command([moved(p) for p in command], *rest)

sys.exit(main())
