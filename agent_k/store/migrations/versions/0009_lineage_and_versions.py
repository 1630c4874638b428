"""mission lineage, versions, retention and webhooks: the mission a fork came from (and the step), the code and
graph it ran under, when retention collected it, and the webhook deliveries of its terminal and approval events

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("missions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("parent_id", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("forked_from_seq", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("code_version", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("graph_fingerprint", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("collected_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index("ix_missions_parent_id", ["parent_id"])
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("mission_id", sa.String(length=64), sa.ForeignKey("missions.id"), nullable=False, index=True),
        sa.Column("event_seq", sa.Integer(), nullable=False),
        sa.Column("event_type", sa.String(length=64), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False, index=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("mission_id", "event_seq"),
    )


def downgrade() -> None:
    op.drop_table("webhook_deliveries")
    with op.batch_alter_table("missions", schema=None) as batch_op:
        batch_op.drop_index("ix_missions_parent_id")
        for column in ("collected_at", "graph_fingerprint", "code_version", "forked_from_seq", "parent_id"):
            batch_op.drop_column(column)
