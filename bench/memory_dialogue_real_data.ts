// The hand-written data of the LoCoMo-like dialogue set
// (bench/memory_dialogue_real_set.ts): fact templates with their wordings,
// reader's questions, answers and the listener's echoes, small talk, names.
// Not a bench itself.

export type Value = string | [string, string];

export interface Template {
  /** Turn variants: {A} answer, {D} a date, {P} a pet's name, {K} a number. */
  turns: string[];
  /** Reader's questions: {N} the speaker, {A} the answer's question form, {D} the date, {K} the number. */
  questions: string[];
  answers: Value[];
  /** The listener's reply: {S} how they call the speaker. */
  echoes: string[];
  /** Later turns of the same speaker on the same topic. */
  follow?: string[];
}

export const T: Template[] = [
  {
    turns: [
      "I went to a {A} support group yesterday and it was so powerful.",
      "Last night I finally made it to the {A} support group. Everyone was so open about their stories.",
    ],
    questions: [
      "When did {N} go to the {A} support group?",
      "What did {N} think of the {A} support group meeting?",
    ],
    answers: [
      "LGBTQ",
      ["grief", "grieving"],
      ["new parents'", "new parent"],
      ["cancer survivors", "cancer survivor"],
    ],
    echoes: [
      "That's so brave of you, {S}! Support groups can be life-changing.",
      "Wow {S}, I'm really glad you found a group like that.",
    ],
  },
  {
    turns: [
      "I've been playing the {A} since I was a kid, it's how I unwind.",
      "Picked up my {A} again last night, haven't played in ages!",
    ],
    questions: [
      "What instrument does {N} play?",
      "Which instrument did {N} start playing again?",
    ],
    answers: ["violin", "clarinet", "cello", "ukulele", "piano"],
    echoes: [
      "I didn't know you played, {S}! You have to play for me sometime.",
      "Music is such a good outlet, {S}.",
    ],
  },
  {
    turns: [
      "We've got {K} kids now, so the house is never quiet!",
      "With {K} little ones running around, I barely get a minute to myself.",
    ],
    questions: [
      "How many kids does {N} have?",
      "How many children does {N} have?",
    ],
    answers: ["2", "3", "4"],
    echoes: ["Kids keep you busy, huh {S}?", "Haha {S}, that's a full house!"],
    follow: ["The kids had a snow day so it's chaos here today."],
  },
  {
    turns: [
      "We adopted a {A} from the shelter last week and named him {P}!",
      "Meet {P}, our new {A}! Adopting him was the best decision we made all year.",
    ],
    questions: [
      "What is the name of {N}'s {A}?",
      "What did {N} name the {A} they adopted?",
    ],
    answers: [
      "puppy",
      ["kitten", "cat"],
      ["rescue dog", "dog"],
      ["bunny", "rabbit"],
    ],
    echoes: [
      "Aww {S}, he's adorable! Send more pics!",
      "Adoption is such a great thing to do, {S}.",
    ],
    follow: ["{P} chewed up my favorite sneakers this morning haha."],
  },
  {
    turns: [
      "I ran a charity {A} last Saturday to raise awareness for mental health.",
      "Just finished a {A} for charity, my legs are jelly!",
    ],
    questions: [
      "When did {N} run a charity race?",
      "What kind of race did {N} run for charity?",
    ],
    answers: [["5K", "5k"], "10K", ["half-marathon", "half marathon"]],
    echoes: [
      "That's amazing, {S}! How long did you train for it?",
      "Running for a cause, love that {S}!",
    ],
  },
  {
    turns: [
      'I just finished reading "{A}", couldn\'t put it down.',
      "Currently reading {A} and it's honestly one of the best books I've read this year.",
    ],
    questions: [
      "What book did {N} read recently?",
      "Which book couldn't {N} put down?",
    ],
    answers: [
      "Becoming",
      "Charlotte's Web",
      "The Midnight Library",
      "Where the Crawdads Sing",
      "Project Hail Mary",
    ],
    echoes: [
      "Ooh I've heard good things about that one, {S}.",
      "Adding it to my reading list, thanks {S}!",
    ],
  },
  {
    turns: [
      "We went camping in {A} with the kids, roasted marshmallows and saw shooting stars.",
      "Just got back from a camping trip to {A}! No signal for three days, it was bliss.",
    ],
    questions: [
      "Where did {N} go camping?",
      "Where did {N} take the family camping?",
    ],
    answers: [
      "the mountains",
      "Yosemite",
      ["the Smokies", "Smoky Mountains"],
      "Big Bend",
    ],
    echoes: [
      "That sounds like the perfect getaway, {S}.",
      "I love camping! Did the kids enjoy it, {S}?",
    ],
  },
  {
    turns: [
      "I took my kids to a pottery workshop and we each made our own {A}.",
      "Signed up for a pottery class, made a wonky little {A} on my first try lol",
    ],
    questions: [
      "What did {N} make at the pottery workshop?",
      "What did {N} make in pottery class?",
    ],
    answers: [["bowls", "bowl"], "mug", "vase", ["plates", "plate"]],
    echoes: ["Pottery is so therapeutic, {S}!", "Show me the {A}, {S}!"],
  },
  {
    turns: [
      "I'm thinking of going into {A}, I want to help people who've been through what I went through.",
      "I've decided to pursue a career in {A}.",
    ],
    questions: [
      "What career path is {N} considering?",
      "What field does {N} want to work in?",
    ],
    answers: ["counseling", "social work", "nursing", "teaching"],
    echoes: [
      "You'd be great at that, {S}. You're so empathetic.",
      "That's a big decision, {S}! I'm proud of you.",
    ],
  },
  {
    turns: [
      "I moved here from {A} {K} years ago and I still miss my family back home.",
      "It's been {K} years since I left {A}, crazy how time flies.",
    ],
    questions: [
      "Where did {N} move from?",
      "How long ago did {N} leave {A}?",
    ],
    answers: ["Sweden", "Brazil", "Kenya", "Ireland"],
    echoes: [
      "Do you get to visit often, {S}?",
      "That must be hard being so far away, {S}.",
    ],
  },
  {
    turns: [
      "I painted a {A} last week, it's hanging in my living room now.",
      "Finally finished my painting of a {A}! Took me almost a month.",
    ],
    questions: [
      "What did {N} paint recently?",
      "What is in {N}'s latest painting?",
    ],
    answers: [
      "sunset over the lake",
      ["field of sunflowers", "sunflower field"],
      "horse",
      "lighthouse",
    ],
    echoes: [
      "You're so talented, {S}! I can't even draw a stick figure.",
      "Wow {S}, I'd love to see your art in person.",
    ],
    follow: ["I've been trying watercolors instead of acrylics lately."],
  },
  {
    turns: [
      "My {A}'s wedding is on {D}, and I'm a bridesmaid!",
      "Big news, my {A} is getting married {D}!",
    ],
    questions: [
      "When is {N}'s {A} getting married?",
      "Whose wedding is {N} going to on {D}?",
    ],
    answers: ["sister", "brother", "cousin", "best friend"],
    echoes: [
      "Congrats to your family, {S}! Weddings are the best.",
      "Aww {S}, that's wonderful news.",
    ],
  },
  {
    turns: [
      "Spent Saturday volunteering at the {A}, exhausting but so rewarding.",
      "I've been volunteering at a {A} twice a week, it keeps me grounded.",
    ],
    questions: [
      "Where does {N} volunteer?",
      "Where has {N} been volunteering?",
    ],
    answers: [
      "homeless shelter",
      "food bank",
      "animal rescue",
      ["children's hospital", "children hospital"],
    ],
    echoes: [
      "You have such a big heart, {S}.",
      "That's so good of you, {S}. Giving back matters.",
    ],
  },
  {
    turns: [
      "I've gotten really into {A} lately, it's such a good stress reliever.",
      "Started {A} a couple of months ago and I'm hooked.",
    ],
    questions: [
      "What new hobby has {N} picked up?",
      "What does {N} do to relieve stress?",
    ],
    answers: ["rock climbing", "knitting", "birdwatching", "baking bread"],
    echoes: [
      "Everyone needs a hobby like that, {S}!",
      "Ooh {S}, you'll have to teach me.",
    ],
  },
  {
    turns: [
      "We just got back from {A}, the food alone was worth the flight!",
      "Our trip to {A} was unforgettable, I'm already planning the next one.",
    ],
    questions: [
      "Where did {N} travel recently?",
      "Which country did {N} visit on vacation?",
    ],
    answers: ["Japan", "Portugal", "Mexico", "Greece", "Vietnam"],
    echoes: ["Jealous, {S}! Show me the photos.", "Welcome back, {S}!"],
  },
  {
    turns: [
      "I'm turning {K} next week, we're throwing a party at {A}!",
      "My birthday dinner is at {A}, can't believe I'll be {K}.",
    ],
    questions: [
      "Where is {N} celebrating the {K}th birthday?",
      "Where will {N}'s birthday party be?",
    ],
    answers: [
      "the lake house",
      "my parents' place",
      "a rooftop bar",
      "the beach",
    ],
    echoes: ["Happy early birthday, {S}!", "Birthday party! Count me in, {S}."],
  },
  {
    turns: [
      "My daughter's {A} recital is on {D}, she's been practicing nonstop.",
      "{D} is my son's {A} recital, wish him luck!",
    ],
    questions: [
      "When is the {A} recital of {N}'s child?",
      "What is happening on {D} for {N}'s kid?",
    ],
    answers: ["dance", "piano", "ballet", "choir"],
    echoes: ["Break a leg to them, {S}!", "Take videos, {S}!"],
  },
  {
    turns: [
      "I got promoted to {A} at work! All those late nights paid off.",
      "Guess who's the new {A}? Me!! Got the promotion yesterday.",
    ],
    questions: [
      "What was {N} promoted to?",
      "What is {N}'s new position at work?",
    ],
    answers: ["team lead", "senior designer", "head nurse", "store manager"],
    echoes: [
      "Congratulations {S}! You totally deserve it.",
      "So proud of you, {S}!",
    ],
  },
  {
    turns: [
      "The doctor says I need to cut down on {A}, which is rough.",
      "Doc told me no more {A} for a while. Ugh.",
    ],
    questions: [
      "What did the doctor tell {N} to cut back on?",
      "What does {N} have to give up for health reasons?",
    ],
    answers: ["coffee", "sugar", "salt", ["red meat", "meat"]],
    echoes: [
      "Health comes first, {S}. You've got this.",
      "That's tough, {S}, but you'll feel better.",
    ],
  },
  {
    turns: [
      "Saw {A} live last night, best concert of my life!",
      "{A} played an amazing show at the arena, I screamed myself hoarse.",
    ],
    questions: [
      "Which band did {N} see in concert?",
      "What concert did {N} go to?",
    ],
    answers: ["Coldplay", "the Killers", "Paramore", "Imagine Dragons"],
    echoes: ["No way {S}, I'm so jealous!", "Live music hits different, {S}."],
  },
  {
    turns: [
      "Our team won the {A} tournament last night!",
      "We took first place in the {A} tournament, I still can't believe it.",
    ],
    questions: [
      "Which tournament did {N}'s team win?",
      "What tournament did {N} win?",
    ],
    answers: ["bowling", "trivia", "chess", "volleyball"],
    echoes: ["Champions! Way to go, {S}!", "Congrats on the win, {S}!"],
  },
  {
    turns: [
      "I've started collecting vintage {A}, found three at a flea market.",
      "My vintage {A} collection is getting out of hand lol",
    ],
    questions: [
      "What does {N} collect?",
      "What vintage items does {N} collect?",
    ],
    answers: ["cameras", ["vinyl records", "vinyl"], "postcards", "watches"],
    echoes: [
      "That's such a cool collection, {S}.",
      "Flea markets are the best, {S}!",
    ],
  },
  {
    turns: [
      "Had a job interview at {A} yesterday, fingers crossed.",
      "I interviewed with {A} this morning and I think it went well!",
    ],
    questions: [
      "Where did {N} interview for a job?",
      "Which company did {N} have an interview with?",
    ],
    answers: ["a startup", "the hospital", "a bank", "the museum"],
    echoes: [
      "Good luck {S}! They'd be lucky to have you.",
      "Fingers crossed for you, {S}!",
    ],
  },
  {
    turns: [
      "My son graduated from {A} in May, so proud of him.",
      "Our oldest just finished {A}, graduation was so emotional.",
    ],
    questions: [
      "What did {N}'s son graduate from?",
      "Where did {N}'s kid graduate from?",
    ],
    answers: [
      "high school",
      "the police academy",
      "culinary school",
      "college",
    ],
    echoes: ["Congrats to your son, {S}!", "You must be so proud, {S}."],
  },
  {
    turns: [
      "I'm growing {A} on my balcony now, gardening is so relaxing.",
      "My little garden finally produced some {A}!",
    ],
    questions: [
      "What is {N} growing in the garden?",
      "What plants does {N} grow?",
    ],
    answers: [["tomatoes", "tomato"], "herbs", "strawberries", "peppers"],
    echoes: [
      "A green thumb, {S}! I kill every plant I touch.",
      "Fresh from the garden, nice {S}!",
    ],
  },
  {
    turns: [
      "I'm writing a novel about {A}, slowly but surely.",
      "Working on my book again, it's about {A}.",
    ],
    questions: [
      "What is {N}'s novel about?",
      "What is the book {N} is writing about?",
    ],
    answers: [
      "a lighthouse keeper",
      "time travel",
      "two sisters",
      "a haunted hotel",
    ],
    echoes: ["I'd read that in a heartbeat, {S}!", "You're so creative, {S}."],
  },
  {
    turns: [
      "I lost my wallet at {A}, what a nightmare.",
      "Somebody took my wallet at {A} yesterday, had to cancel all my cards.",
    ],
    questions: [
      "Where did {N} lose the wallet?",
      "Where was {N}'s wallet stolen or lost?",
    ],
    answers: ["the airport", "the concert", "the mall", "the gym"],
    echoes: ["Oh no {S}, that's the worst!", "Ugh, so sorry {S}."],
  },
  {
    turns: [
      "My mom was diagnosed with {A}, we're all pretty shaken.",
      "Found out my mother has {A}. It's been a hard week.",
    ],
    questions: [
      "What was {N}'s mom diagnosed with?",
      "What illness does {N}'s mother have?",
    ],
    answers: ["diabetes", "arthritis", "pneumonia", "a heart condition"],
    echoes: [
      "I'm so sorry {S}, sending love to your mom.",
      "Hang in there, {S}.",
    ],
  },
  {
    turns: [
      "I've been doing more self-care lately, {A} every morning before work.",
      "My selfcare routine now is {A} first thing in the morning.",
    ],
    questions: [
      "What does {N} do for self-care?",
      "What is {N}'s morning selfcare routine?",
    ],
    answers: ["yoga", "journaling", "a long walk", "meditation"],
    echoes: ["Self-care is so important, {S}.", "Good for you, {S}!"],
  },
  {
    turns: [
      "We bought a house in {A}! Closing was on {D}.",
      "We finally closed on our first home in {A} on {D}.",
    ],
    questions: [
      "Where did {N} buy a house?",
      "When did {N} close on the new home?",
    ],
    answers: ["Denver", "the suburbs", "Austin", "a small town upstate"],
    echoes: ["Homeowners! Congrats {S}!", "Housewarming party soon, {S}?"],
  },
  {
    turns: [
      "I've been learning {A} on Duolingo, day {K} of my streak.",
      "Trying to learn {A} before our trip, my accent is terrible haha",
    ],
    questions: [
      "What language is {N} learning?",
      "Which language has {N} been studying?",
    ],
    answers: ["Spanish", "Japanese", "Italian", "Korean"],
    echoes: [
      "That's so cool, {S}! Say something!",
      "Languages are hard, keep going {S}.",
    ],
  },
  {
    turns: [
      "Took the kids to the {A} on Sunday, they loved the {B}.",
      "We spent the whole day at the {A}, the kids couldn't stop talking about the {B}.",
    ],
    questions: [
      "Where did {N} take the kids on Sunday?",
      "What did {N}'s kids love at the {A}?",
    ],
    answers: ["zoo", "aquarium", ["science museum", "museum"], "farm"],
    echoes: [
      "Sounds like a fun family day, {S}!",
      "Kids are so cute at that age, {S}.",
    ],
  },
  {
    turns: [
      "I've been married to my husband for {K} years now, time flies.",
      "Our {K}-year anniversary is coming up, can you believe it?",
    ],
    questions: [
      "How long has {N} been married?",
      "Which wedding anniversary are {N} and her husband celebrating?",
    ],
    answers: ["5", "7", "10", "12"],
    echoes: [
      "That's beautiful, {S}. Happy anniversary!",
      "You two are goals, {S}.",
    ],
  },
  {
    turns: [
      "I signed up for a {A} class at the community center.",
      "Started taking {A} lessons on Tuesday nights!",
    ],
    questions: [
      "What class did {N} sign up for?",
      "What lessons is {N} taking?",
    ],
    answers: ["salsa", "photography", "cooking", ["swimming", "swim"]],
    echoes: [
      "That's so fun, {S}! Let me know how it goes.",
      "Ooh {S}, I might join you!",
    ],
  },
  {
    turns: [
      "Went to the {A} festival with friends, the whole town was there.",
      "The {A} fest this weekend was a blast!",
    ],
    questions: [
      "Which festival did {N} attend?",
      "What festival did {N} go to with friends?",
    ],
    answers: ["jazz", "food truck", "pride", "harvest"],
    echoes: ["Festivals are the best, {S}!", "Wish I'd been there, {S}."],
  },
  {
    turns: [
      "My grandma taught me how to make {A} when I was little, I still use her recipe.",
      "Made my grandmother's {A} today, it tasted just like childhood.",
    ],
    questions: [
      "What did {N}'s grandmother teach her to make?",
      "Whose recipe does {N} use for {A}?",
    ],
    answers: [
      "dumplings",
      "apple pie",
      ["cinnamon rolls", "cinnamon roll"],
      "tamales",
    ],
    echoes: ["Family recipes are the best, {S}.", "Save me some, {S}!"],
  },
];

/** Small talk: generic chat lines, no fact in them. */
export const CHAT = [
  "Hey! How's it going? Long time no talk.",
  "Thanks, that means a lot to me.",
  "Haha, I totally get what you mean.",
  "Work has been crazy this week, I barely had time to breathe.",
  "How was your weekend? Do anything fun?",
  "I can't believe how fast this year is going.",
  "The weather has been awful, rain every single day.",
  "I need a vacation so badly.",
  "That's awesome, I'm so happy for you!",
  "Did you see the game last night?",
  "Honestly, cooking dinner every night is exhausting.",
  "Let's grab coffee soon, I miss you!",
  "I've been so tired lately, I think I need more sleep.",
  "Sorry for the late reply, it's been hectic.",
  "What have you been up to lately?",
  "Anyway, enough about me. How are you?",
  "That's such a good point.",
  "I'm so glad we talk like this.",
  "Take care of yourself, okay?",
  "Talk soon! Have a great week.",
  "Lol yes, exactly.",
  "Ugh, Mondays.",
  "My phone died halfway through the day, what a mess.",
  "We should plan something for next month.",
  "I've been binge-watching a new show, it's so addictive.",
  "Traffic this morning was unreal.",
  "I'm trying to drink more water, it's harder than it sounds.",
  "Good luck with everything, keep me posted!",
  "Family dinners are always a bit chaotic, but I love them.",
  "That reminds me, I still owe you a book.",
  "Honestly, you inspire me so much.",
  "What's your plan for the holidays?",
];

export const PEOPLE: [name: string, nick: string][] = [
  ["Caroline", "Caro"],
  ["Melanie", "Mel"],
  ["Jonathan", "Jon"],
  ["Gina", "Gina"],
  ["Joanna", "Jo"],
  ["Nathaniel", "Nate"],
  ["Deborah", "Deb"],
  ["Calvin", "Cal"],
  ["Maria", "Maria"],
  ["Samuel", "Sam"],
  ["Priya", "Priya"],
  ["Omar", "Omar"],
  ["Audrey", "Audrey"],
  ["Andrew", "Andy"],
  ["Evan", "Evan"],
  ["Jolene", "Jo"],
  ["Tim", "Tim"],
  ["Fatima", "Fati"],
  ["Diego", "Diego"],
  ["Lena", "Lena"],
];
export const PETS = [
  "Oscar",
  "Biscuit",
  "Luna",
  "Max",
  "Pepper",
  "Mochi",
  "Ziggy",
];
export const THINGS = [
  "penguins",
  "giraffes",
  "sharks",
  "dinosaur bones",
  "goats",
];
export const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
export const WORDS = [
  "zero",
  "one",
  "two",
  "three",
  "four",
  "five",
  "six",
  "seven",
  "eight",
  "nine",
  "ten",
  "eleven",
  "twelve",
];
