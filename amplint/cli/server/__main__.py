import sys

from amplint.cli.server import main

sys.exit(main())
