"""mission control: approval decisions and cancel requests

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("missions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("approval", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=True))
        batch_op.add_column(sa.Column("cancel_requested_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("missions", schema=None) as batch_op:
        batch_op.drop_column("cancel_requested_at")
        batch_op.drop_column("approval")
