"""The mission: its five phases as a graph, its state and options, the durable runner that checkpoints every
step, and what runs between and beside the steps (launch, cheap-first evaluation, blending, fork, webhooks)."""
