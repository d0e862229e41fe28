"""HELM Lite (HELM's current leaderboard): its scenarios, with the ones it shares with HELM Classic imported from suites/core."""
