"""A competition's files, as Kaggle lays them out, turned into the tables every mission reads: `train` (an id,
the features, the target columns), `test` (the id and the features) and the sample submission.

Layouts it takes: CSV/TSV, JSON or JSON-lines records and Parquet tables; training labels in a file of their own
(`labels.csv`, `train_labels.csv`), or a labels file that is the whole training table; a second training file
(joined like any extra table, only where it covers the test rows); no test file (the ids come from the sample
submission); extra tables joined on a key; a sample submission whose id is spelled or composed differently from
the test's, matches it only by position, or is missing (its rows repeat the test's columns); a target given as
one-hot columns, or as true/false; columns only in training (left out, and listed). Images and audio whose files
are the rows (`media`): named by a table, in one folder per class, beside features, or in zips. Without the
media extra, tables that hold features are entered alone; a folder of media and nothing else is refused in one
line that names the pip command.
"""

from agent_k.platforms.layouts.arrange import Arranged, arrange_folder
from agent_k.platforms.layouts.files import LayoutError
from agent_k.platforms.layouts.records import TABLES, read_records
from agent_k.platforms.layouts.targets import from_one_hot, is_one_hot

__all__ = [
    "TABLES",
    "Arranged",
    "LayoutError",
    "arrange_folder",
    "from_one_hot",
    "is_one_hot",
    "read_records",
]
