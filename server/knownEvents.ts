import { Interface, type LogDescription, type ParamType } from 'ethers';

/**
 * Decoding of the events an explorer shows by name: token transfers and approvals (ERC-20, ERC-721,
 * ERC-1155) and the EntryPoint's own events. ERC-20 and ERC-721 share Transfer/Approval topics and
 * differ by how many topics are indexed, so the candidate whose topic count matches wins.
 */
const EVENTS = [
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Approval(address indexed owner, address indexed spender, uint256 value)',
  'event ApprovalForAll(address indexed owner, address indexed operator, bool approved)',
  'event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)',
  'event TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values)',
  'event Deposit(address indexed dst, uint256 wad)',
  'event Withdrawal(address indexed src, uint256 wad)',
  'event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)',
  'event AccountDeployed(bytes32 indexed userOpHash, address indexed sender, address factory, address paymaster)',
  'event UserOperationRevertReason(bytes32 indexed userOpHash, address indexed sender, uint256 nonce, bytes revertReason)',
  'event PostOpRevertReason(bytes32 indexed userOpHash, address indexed sender, uint256 nonce, bytes revertReason)',
  'event UserOperationPrefundTooLow(bytes32 indexed userOpHash, address indexed sender, uint256 nonce)',
  'event BeforeExecution()',
  'event SignatureAggregatorChanged(address indexed aggregator)',
  'event Deposited(address indexed account, uint256 totalDeposit)',
  'event Withdrawn(address indexed account, address withdrawAddress, uint256 amount)',
  'event StakeLocked(address indexed account, uint256 totalStaked, uint256 unstakeDelaySec)',
  'event StakeUnlocked(address indexed account, uint256 withdrawTime)',
  'event StakeWithdrawn(address indexed account, address withdrawAddress, uint256 amount)',
];
// Same names and topics as ERC-20's Transfer/Approval, with the third argument indexed.
const ERC721_EVENTS = [
  'event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)',
  'event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId)',
];

const INTERFACES = [new Interface(EVENTS), new Interface(ERC721_EVENTS)];

export type DecodedEvent = {
  name: string;
  /** `indexed` arguments are the log's topics after the first; the others are its data. */
  inputs: Array<{ name: string; type: string; value: string | boolean; indexed: boolean }>;
};

function toWire(value: unknown, type: ParamType): string | boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return JSON.stringify(value.map((v, i) => toWire(v, type.arrayChildren ?? type.components?.[i] ?? type)));
  return String(value).toLowerCase();
}

/** The event a log is, or null when its ABI is not one of the known ones. */
export function decodeLog(log: { topics: readonly string[]; data: string }): DecodedEvent | null {
  for (const iface of INTERFACES) {
    let parsed: LogDescription | null = null;
    try {
      parsed = iface.parseLog({ topics: [...log.topics], data: log.data });
    } catch {
      parsed = null;
    }
    if (!parsed) continue;
    const indexed = parsed.fragment.inputs.filter((p) => p.indexed).length;
    if (indexed + 1 !== log.topics.length) continue;
    return {
      name: parsed.name,
      inputs: parsed.fragment.inputs.map((p, i) => ({
        name: p.name,
        type: p.type,
        value: toWire(parsed.args[i], p),
        indexed: p.indexed === true,
      })),
    };
  }
  return null;
}
