"""The Pulumi policy pack: `pulumi preview --policy-pack policies --policy-pack-config policies/config/<env>.json`.

Constructs the PolicyPack and nothing else (its constructor starts the analyzer's gRPC server).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the rules import components/

from pulumi_policy import PolicyPack

from policies.pack import PACK_NAME, build_policies

PolicyPack(name=PACK_NAME, policies=build_policies())
