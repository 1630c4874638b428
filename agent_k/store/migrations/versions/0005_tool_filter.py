"""tool filter: the agent tools an operator has removed from a running mission

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("missions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("tool_filter", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("missions", schema=None) as batch_op:
        batch_op.drop_column("tool_filter")
