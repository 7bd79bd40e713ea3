"""The release, as include/bloomkit.h has it (a test checks); the
library this package loads must be the same release."""
__version__ = "0.1.0"
