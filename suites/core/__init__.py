"""HELM Classic's 16 core scenarios and its targeted ones, each file one scenario with its offline edition in data/."""
