"""The shipped suites: HELM Classic's core scenarios (core) and HELM Lite's (lite), which imports the scenarios the two share."""
