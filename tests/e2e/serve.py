"""Entry point of the browser tests' server: ``streamlit run`` plus a thread dump on SIGUSR1.

``python tests/e2e/serve.py DUMP_PATH run app.py ...`` registers :mod:`faulthandler` to append
every Python thread's stack to ``DUMP_PATH`` when the process receives SIGUSR1, then hands the
remaining arguments to Streamlit's own command line. The concurrency test uses the dump to say
which threads outlived the sessions when its thread-count check fails.
"""
import faulthandler
import signal
import sys

from streamlit.web.cli import main

if __name__ == "__main__":
    dump = open(sys.argv[1], "a")  # kept open for the life of the server: faulthandler writes to it
    faulthandler.register(signal.SIGUSR1, file=dump, all_threads=True)
    sys.argv = ["streamlit"] + sys.argv[2:]
    sys.exit(main())
