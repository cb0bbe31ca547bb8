"""The processes docbench starts and stops: managed servers (pid files, a death signal, stop
by PID only, leftovers of a killed run reaped), a server in a chroot (Jail), and the work
directories they live in (``managed.py``). Below the systems, which build their servers on
it, and the workloads, which clear their work directories with it; it knows no system."""
