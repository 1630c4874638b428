"""The MLE-bench platform: openai/mle-bench's prepared competitions, each graded on its answers and ranked on its
real Kaggle leaderboard (docs/mlebench.md).

Light at import (its declaration is read whenever a platform is named): the adapter loads on first use.
"""
