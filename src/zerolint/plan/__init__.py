"""`zerolint plan`: the fastest config that fits a model on given hardware, written for its consumer.

job.py (what is trained) and hardware.py (what it runs on) are the inputs; candidates.py enumerates configs;
search.py estimates each with estimate.memory (the margin included) and times it with steptime.py; write.py writes
the pick in the consumer's form; report.py prints; run.py is the command's body (docs/plan.md)."""
