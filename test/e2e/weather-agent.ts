// The Agents SDK agent the e2e tests run: one strict tool that records the
// city it was asked about and answers with a fixed forecast.
import { Agent, tool } from '@openai/agents';

/** What the tool answers for `city`. */
export const forecast = (city: string): string => `${city}: 18°C, light rain`;

export function weatherAgent(model: string, asked: string[]): Agent {
  const getWeather = tool({
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    strict: true,
    execute: (input) => {
      const { city } = input as { city: string };
      asked.push(city);
      return forecast(city);
    },
  });
  return new Agent({ name: 'Weather desk', instructions: 'Answer weather questions with the tool.', model, tools: [getWeather] });
}
