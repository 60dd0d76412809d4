"""Settings from the environment: nothing else in the package reads os.environ.

A package, not one module, because the table of variables (which load_settings reads and
`n8n-a2a --help` prints) beside their readers would not fit 400 lines: settings.py is
what is configured (the field defaults are the variables' defaults), values.py turns one
variable's text into a value, variables.py is the table, load.py reads the environment
into Settings, naming every problem at once.
"""

from .load import ConfigError, Problem, doubts, load_settings
from .settings import Settings
from .variables import VARIABLES, Variable

__all__ = ["VARIABLES", "ConfigError", "Problem", "Settings", "Variable", "doubts", "load_settings"]
