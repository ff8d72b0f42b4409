"""Analysis of runs and datasets: statistics, report, compare, audit, contamination probes, HTML.

Pure functions over run folders and task lists; the CLI verbs in cli/analysis_cmd.py are thin.
"""
