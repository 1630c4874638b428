"""liveness: a mission's last heartbeat (the budget charges a dead process's step up to it, not to the resume),
and each worker's expiry (a worker whose heartbeat is older than its lease is gone)

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("missions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("workers", schema=None) as batch_op:
        batch_op.add_column(sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("workers", schema=None) as batch_op:
        batch_op.drop_column("expires_at")
    with op.batch_alter_table("missions", schema=None) as batch_op:
        batch_op.drop_column("heartbeat_at")
