import { describe, expect, it } from 'vitest';
import { whenOf } from './when.js';

// A Thursday afternoon (UTC).
const sent = '2023-05-25T14:00:00.000Z';

describe('whenOf', () => {
  it.each([
    ['Caroline went to the LGBTQ support group yesterday', 'On 24 May 2023'],
    ['Melanie went there two days ago', 'On 23 May 2023'],
    ['I did it this morning', 'On 25 May 2023'],
    ['Released on March 3rd', 'On 3 March 2023'],
    ['Melanie ran a charity race last Sunday', 'On Sunday, 21 May 2023'],
    ['Last Fri Melanie took the kids to a pottery workshop', 'On Friday, 19 May 2023'],
    ['last weekend I went hiking', 'On the weekend before 25 May 2023'],
    ['Caroline gave a speech at a school last week', 'In the week before 25 May 2023'],
    ['next week I start the new job', 'In the week after 25 May 2023'],
    ['a few weeks ago we met', 'A few weeks before 25 May 2023'],
    ['Melanie is going camping next month', 'In June 2023'],
    ['Caroline is going to the conference in July', 'In July 2023'],
    ['Melanie painted that last year', 'In 2022'],
    ['Her 18th birthday was ten years ago', 'In 2013'],
    ['Melanie read the book in 2022', 'In 2022'],
  ])('%s → %s', (text, expected) => {
    expect(whenOf(text, sent)).toBe(expected);
  });

  it.each(['I may do it', 'version 2.0 is out', 'meet at 3 pm', 'Sun is shining'])(
    'no date in "%s": the message\'s own day',
    (text) => {
      expect(whenOf(text, sent)).toBe('On 25 May 2023');
    },
  );
});
