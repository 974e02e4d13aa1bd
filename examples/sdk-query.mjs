// Drives Keel from a program with keel/sdk: one prompt, reads allowed, everything else refused.
//   ANTHROPIC_API_KEY=… node examples/sdk-query.mjs "what does this project do?"
import { query } from 'keel/sdk';

const prompt = process.argv[2] ?? 'What is in this folder?';
const conversation = query({
  prompt,
  options: {
    permissionMode: 'ask', // reads run; anything else asks canUseTool
    canUseTool: async (toolName, input) => {
      console.error(`[keel asks] ${toolName} ${JSON.stringify(input)}`);
      return { behavior: 'deny', message: 'this example host only lets the agent read' };
    },
  },
});

for await (const message of conversation) {
  if (message.type === 'system' && message.subtype === 'init') console.error(`[session ${message.session_id}, model ${message.model}]`);
  if (message.type === 'assistant') {
    for (const block of message.message.content) if (block.type === 'text') console.log(block.text);
  }
  if (message.type === 'result') console.error(`[${message.subtype}: ${message.num_turns} turns, $${message.total_cost_usd.toFixed(4)}]`);
}
