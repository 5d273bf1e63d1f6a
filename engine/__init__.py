"""The 跑胡子 rules engine: cards, rules, state, hu evaluation, scoring, policies."""
