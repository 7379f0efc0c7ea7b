"""The Pulumi policy pack: `pulumi preview --policy-pack policies --policy-pack-config policies/config/<env>.json`.

Shares the analyzer's property conversion between policies (policies/property_cache.py), then
constructs the PolicyPack (its constructor starts the analyzer's gRPC server).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the rules import components/

from pulumi_policy import PolicyPack

from policies import property_cache
from policies.pack import PACK_NAME, build_policies

if not property_cache.install():  # one property conversion per resource instead of one per policy
    print("kuberay-platform-policies: pulumi_policy changed; each policy converts resources again", file=sys.stderr)
PolicyPack(name=PACK_NAME, policies=build_policies())
