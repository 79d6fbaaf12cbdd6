/**
 * The filter arguments as executed (server/graphql/schema.ts, asExecutedFilter): each literal, with
 * each set of variables, gives what graphql-js's own coercion against the published input type gives,
 * refusals included. (That introspection answers the published types: test/server/graphql.test.ts.)
 */
import { expect } from 'chai';
import {
  parse,
  valueFromAST,
  type FieldNode,
  type GraphQLInputObjectType,
  type GraphQLScalarType,
  type OperationDefinitionNode,
  type ValueNode,
} from 'graphql';
import { executionSchema, subgraphSchema } from '../../server/graphql/schema.js';

const published = subgraphSchema.getType('UserOp_filter') as GraphQLInputObjectType;
const executed = executionSchema.getType('UserOp_filter') as GraphQLScalarType;

/** The `where` literal of a one-field query, as the parser gives it. */
function literal(text: string): ValueNode {
  const operation = parse(`{ userOps(where: ${text}) { id } }`).definitions[0] as OperationDefinitionNode;
  return (operation.selectionSet.selections[0] as FieldNode).arguments![0]!.value;
}

/** graphql-js's answer (undefined: invalid) and the executed scalar's (a throw: invalid). */
function both(text: string, variables: Record<string, unknown>) {
  const node = literal(text);
  const want = valueFromAST(node, published, variables);
  let got: unknown;
  try {
    got = executed.parseLiteral(node, variables);
  } catch {
    got = undefined;
  }
  return { want: want === undefined ? 'invalid' : want, got: got === undefined ? 'invalid' : got };
}

const A = '0x00000000000000000000000000000000000000aa';
const B = '0x00000000000000000000000000000000000000bb';

describe('GraphQL filters as executed', () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    [`{sender: "${A.toUpperCase().replace('0X', '0x')}"}`, {}],
    ['{or: [{sender: $a}, {target: $a}]}', { a: A }],
    ['{or: [{sender: $a}, {target: $a}]}', {}],
    ['{or: [{sender: $a}, {target: $b}]}', { a: A, b: null }],
    ['{and: [{or: [{sender: $a}, {target: $a}]}, {blockNumber_gte: $from}, {blockNumber_lte: $to}]}', { a: A, from: '5', to: '900' }],
    ['{and: [{or: [{sender: $a}, {target: $a}]}, {blockNumber_gte: $from}]}', { a: A }],
    [`{sender_in: ["${A}", "${B}"], success: true, nonce_gt: 3, logIndex_lt: 7}`, {}],
    ['{sender_in: $list}', { list: [A, B] }],
    ['{sender_in: $list}', {}],
    [`{sender_in: "${A}"}`, {}],
    ['{sender_in: [$a, $b]}', { a: A, b: B }],
    ['{sender_in: [$a, $b]}', { a: A }],
    ['{sender_in: [$a, $b]}', { a: A, b: null }],
    ['{sender: null, paymaster_not: null}', {}],
    ['{or: {sender: $a}}', { a: A }],
    ['{or: [{or: [{and: [{sender: $a}]}]}]}', { a: A }],
    ['{callData_contains: $c, revertReason_not_contains: "0x08"}', { c: '0xa9059cbb' }],
  ];
  for (const [text, variables] of cases) {
    it(`${text} with ${JSON.stringify(variables)}`, () => {
      const { want, got } = both(text, variables);
      expect(got).to.deep.equal(want);
    });
  }

  it('keeps a literal value that only parseLiteral accepts as graphql-js does (Bytes in any case, BigInt from an Int)', () => {
    const { want, got } = both(`{userOpHash: "0xAB", nonce: 12, actualGasCost_gte: "1000000000000000000000"}`, {});
    expect(got).to.deep.equal(want);
    expect(got).to.deep.equal({ userOpHash: '0xab', nonce: '12', actualGasCost_gte: '1000000000000000000000' });
  });

  it('coerces a whole filter variable against the published type, refusing an unknown field', () => {
    expect(executed.parseValue({ or: [{ sender: A.toUpperCase().replace('0X', '0x') }] })).to.deep.equal({ or: [{ sender: A }] });
    expect(() => executed.parseValue({ sendr: A })).to.throw(/sendr/);
  });
});
