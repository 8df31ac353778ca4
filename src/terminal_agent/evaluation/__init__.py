"""Evaluation statistics (pass@k, bootstrap CIs, paired comparison), reports and plots."""
