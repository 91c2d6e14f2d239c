import sys

from amplint.server import main

sys.exit(main())
