import sys

from connector.cli.main import main

sys.exit(main())
